package crashloop

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"
)

// TestValueNamesItsSet: invariant 4.
func TestValueNamesItsSet(t *testing.T) {
	seen := map[string]bool{}
	for _, key := range []string{"w0:001", "w1:001"} {
		for seq := uint64(1); seq <= 50; seq++ {
			v := crashValue(key, seq, 100)
			if binary.LittleEndian.Uint64(v) != seq {
				t.Fatalf("crashValue(%s, %d) starts with %d", key, seq, binary.LittleEndian.Uint64(v))
			}
			if seen[string(v)] {
				t.Fatalf("crashValue(%s, %d) repeats another key's or SET's value", key, seq)
			}
			seen[string(v)] = true
		}
	}
	if !bytes.Equal(crashValue("k", 7, 3000), crashValue("k", 7, 3000)) {
		t.Fatal("crashValue is not a function of (key, seq, size)")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		for _, maxBytes := range []int{100, 4096, 4 << 20} {
			if n := crashSize(r, maxBytes); n < 1 || n > maxBytes {
				t.Fatalf("crashSize(%d) = %d", maxBytes, n)
			}
		}
	}
}

// TestLiveAtWindow: invariant 2.
func TestLiveAtWindow(t *testing.T) {
	now := time.Now()
	s := keyState{present: true, exp: now, expHi: now.Add(time.Second)}
	for _, c := range []struct {
		at         time.Time
		live, sure bool
	}{
		{now.Add(-2 * time.Second), true, true},
		{now.Add(-500 * time.Millisecond), true, false},
		{now.Add(1500 * time.Millisecond), false, false},
		{now.Add(3 * time.Second), false, true},
	} {
		if live, sure := liveAt(s, c.at); live != c.live || sure != c.sure {
			t.Errorf("liveAt(%v after exp) = %v, %v; want %v, %v", c.at.Sub(now), live, sure, c.live, c.sure)
		}
	}
	if live, sure := liveAt(keyState{present: true}, now); !live || !sure {
		t.Error("a key without expiry is not surely live")
	}
	if live, sure := liveAt(keyState{}, now); live || !sure {
		t.Error("an absent key is not surely absent")
	}
}

// TestCheckKeyClassifies: invariants 1 and 3.
func TestCheckKeyClassifies(t *testing.T) {
	now := time.Now()
	const key = "w0:000"
	v1, v2 := crashValue(key, 1, 10), crashValue(key, 2, 20)
	set1 := keyState{present: true, seq: 1, size: 10}
	set2 := keyState{present: true, seq: 2, size: 20}
	issued := map[uint64]int{1: 10, 2: 20}
	for _, c := range []struct {
		name    string
		acked   keyState
		pending *keyState
		v       []byte
		found   bool
		exact   bool
		want    func(Tally) int
	}{
		{"acknowledged value", set1, nil, v1, true, true, nil},
		{"in-flight value", set1, &set2, v2, true, true, nil},
		{"in-flight delete", set1, &keyState{}, nil, false, true, nil},
		{"lost write", set1, nil, nil, false, true, func(x Tally) int { return x.Lost }},
		{"older value", set2, nil, v1, true, true, func(x Tally) int { return x.Lost }},
		{"resurrected delete", keyState{}, nil, v1, true, true, func(x Tally) int { return x.Resurrected }},
		{"vanished by an overwrite", set1, &set2, nil, false, true, func(x Tally) int { return x.Vanished }},
		{"torn", set1, nil, append([]byte("x"), v1[1:]...), true, true, func(x Tally) int { return x.Torn }},
		{"torn, drain", set1, nil, append([]byte("x"), v1[1:]...), true, false, func(x Tally) int { return x.Torn }},
		{"older value, drain", set2, nil, v1, true, false, func(x Tally) int { return x.StaleAfterKill }},
	} {
		var tally Tally
		l := &keyLog{acked: c.acked, pending: c.pending, issued: issued}
		_, bad := checkKey(key, l, c.v, c.found, now, now, c.exact, &tally)
		switch {
		case c.want == nil && (bad != "" || tally.Bad() != 0):
			t.Errorf("%s: judged bad: %q %+v", c.name, bad, tally)
		case c.want != nil && c.want(tally) != 1:
			t.Errorf("%s: tally %+v (%q)", c.name, tally, bad)
		}
		if tally.Keys != 1 {
			t.Errorf("%s: %d keys counted", c.name, tally.Keys)
		}
	}
}

// TestExpiryFits: invariant 5, an expiry read back from the server is
// matched against the window a state gives.
func TestExpiryFits(t *testing.T) {
	now := time.Now()
	hour := keyState{present: true, exp: now.Add(time.Hour), expHi: now.Add(time.Hour + 2*time.Millisecond)}
	short := keyState{present: true, exp: now.Add(300 * time.Millisecond), expHi: now.Add(302 * time.Millisecond)}
	none := keyState{present: true}
	read := func(ttl time.Duration) keyState { return serverExpiry(none, ttl, now, now.Add(time.Millisecond)) }
	for _, c := range []struct {
		name string
		s    keyState
		got  keyState
		fits bool
	}{
		{"an hour read back", hour, read(time.Hour - 5*time.Millisecond), true},
		{"a short one read back", short, read(299 * time.Millisecond), true},
		{"short where an hour was set", hour, read(299 * time.Millisecond), false},
		{"an hour where a short one was set", short, read(time.Hour), false},
		{"none where an hour was set", hour, read(-1), false},
		{"an hour where none was set", none, read(time.Hour), false},
		{"none read back", none, read(-1), true},
	} {
		if got := expiryFits(c.s, c.got); got != c.fits {
			t.Errorf("%s: expiryFits = %v, want %v", c.name, got, c.fits)
		}
	}
}

// TestAggregateStates: invariant 7's judgements of what a list or a hash
// read after a restart holds.
func TestAggregateStates(t *testing.T) {
	runs := [][]uint64{{3, 5, 8, 9, 12}, {5, 8, 14, 15}} // the second: came back as [5 8] after a kill
	for _, tc := range []struct {
		elems []uint64
		run   bool
	}{{nil, true}, {[]uint64{5, 8}, true}, {[]uint64{8, 9, 12}, true}, {[]uint64{8, 14}, true}, {[]uint64{5, 9}, false},
		{[]uint64{12, 13}, false}, {[]uint64{4}, false}, {[]uint64{9, 12, 14}, false}} {
		if got := isRun(tc.elems, runs); got != tc.run {
			t.Fatalf("isRun(%v) = %v, want %v", tc.elems, got, tc.run)
		}
	}
	a := aggState{fields: map[string]uint64{"f1": 4}}
	if b := a.clone(); !b.equal(a) || func() bool { b.fields["f1"] = 5; return b.equal(a) }() {
		t.Fatal("clone shares the fields, or equal is wrong")
	}

	// A push in flight at a kill and not applied (the list came back as
	// acknowledged) is no part of its history: a later kill that gives
	// back the pushes after it, older than acknowledged, is a state the
	// list had.
	l := &aggLog{list: true, acked: aggState{elems: []uint64{1, 2}}, runs: [][]uint64{{1, 2, 3}}}
	l.pending = &aggState{elems: []uint64{1, 2, 3}}
	var tally Tally
	l.settle(t, "k", aggState{elems: []uint64{1, 2}}, false, false, &tally)
	for _, seq := range []uint64{4, 5} { // pushed and acknowledged after the restart
		l.runs[len(l.runs)-1] = append(l.runs[len(l.runs)-1], seq)
		l.acked.elems = append(l.acked.elems, seq)
	}
	l.settle(t, "k", aggState{elems: []uint64{2, 4}}, false, false, &tally) // older: 5 lost, LPOP of 1 kept
	if tally.Torn != 0 || tally.StaleAfterKill != 1 {
		t.Fatalf("tally %+v: want the older state counted stale, nothing torn", tally)
	}
}

// TestMatchesJudgesAtTheReadWindow checks invariant 2's read window: a key
// that expired while its read was on the way may read as its value or as
// nil; one that expired before the read was sent may not read as its value.
func TestMatchesJudgesAtTheReadWindow(t *testing.T) {
	exp := time.Now()
	s := keyState{present: true, seq: 1, size: 16, exp: exp, expHi: exp}
	v := crashValue("k", 1, 16)
	if !matches("k", s, v, true, exp.Add(-2*time.Second), exp.Add(5*time.Second)) {
		t.Error("a value read by a command sent 2 s before its expiry and answered 5 s after: not matched")
	}
	if !matches("k", s, nil, false, exp.Add(-2*time.Second), exp.Add(5*time.Second)) {
		t.Error("a nil read answered 5 s after the expiry: not matched")
	}
	if matches("k", s, v, true, exp.Add(2*time.Second), exp.Add(5*time.Second)) {
		t.Error("a value read by a command sent 2 s after its expiry: matched")
	}
	if matches("k", s, nil, false, exp.Add(-5*time.Second), exp.Add(-2*time.Second)) {
		t.Error("a nil read answered 2 s before the expiry: matched")
	}
}
