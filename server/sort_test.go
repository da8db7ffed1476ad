package server

import (
	"strconv"
	"strings"
	"testing"
)

// TestSortBounded (S69): a SORT whose result would pass max_value bytes
// is refused before it is all built, answered or to be stored, and a
// refused STORE leaves its destination as it was; a stored list past
// the list elements limit is refused with the list's error.
func TestSortBounded(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), func(o *Options) {
		o.MaxValueBytes, o.MaxListElements = 4096, 50
	})
	rc := dialRaw(t, path)
	do := func(args ...string) string {
		t.Helper()
		rc.cmd(args...)
		return rc.reply()
	}
	push := []string{"RPUSH", "l"}
	for i := range 40 {
		push = append(push, strconv.Itoa(i))
		do("SET", "g_"+strconv.Itoa(i), strings.Repeat("v", 200))
	}
	do(push...)
	do("SET", "d", "kept")
	tooBig := "-" + errSortTooBig(4096)
	for _, c := range [][]string{{"SORT", "l", "GET", "g_*"}, {"SORT_RO", "l", "GET", "#", "GET", "g_*"}, {"SORT", "l", "GET", "g_*", "STORE", "d"}} {
		if got := do(c...); got != tooBig {
			t.Fatalf("%q: %q, want %q", c, got, tooBig)
		}
	}
	if got := do("SORT", "l", "LIMIT", "0", "10", "GET", "g_*"); strings.Count(got, "$") != 10 {
		t.Fatalf("SORT of 10 values: %q", got)
	}
	want := "-ERR list would have 80 elements, the limit (server.max_list_elements) is 50"
	if got := do("SORT", "l", "GET", "#", "GET", "#", "STORE", "d"); got != want {
		t.Fatalf("SORT STORE of 80 elements: %q, want %q", got, want)
	}
	if got := do("GET", "d"); got != "$kept" {
		t.Fatalf("the destination of refused STOREs: %q", got)
	}
}

// TestSortLocks (S69): SORT takes the transaction lock exclusively only
// when it stores or reads keys by a pattern (sortExclusive); sorting one
// key alone, BY nosort or GET # runs beside other commands.
func TestSortLocks(t *testing.T) {
	for _, tc := range []struct {
		args []string
		excl bool
	}{
		{[]string{"SORT", "k"}, false},
		{[]string{"SORT", "k", "ALPHA", "DESC", "LIMIT", "0", "5"}, false},
		{[]string{"SORT", "k", "BY", "nosort", "GET", "#"}, false},
		{[]string{"SORT", "k", "GET", "#\x00"}, false},
		{[]string{"SORT", "k", "BY", "w_*"}, true},
		{[]string{"SORT", "k", "by", "w_*->f"}, true},
		{[]string{"SORT", "k", "GET", "g_*"}, true},
		{[]string{"SORT", "k", "GET", "nostar"}, true},
		{[]string{"SORT", "k", "store", "d"}, true},
		{[]string{"SORT", "k", "STORE\x00x", "d"}, true},
		{[]string{"SORT", "k", "GET", "STORE"}, true}, // conservative: a pattern read as a word
		{[]string{"SORT", "k", "BY", "STORE", "x"}, true},
	} {
		args := make([][]byte, len(tc.args))
		for i, a := range tc.args {
			args[i] = []byte(a)
		}
		if got := sortExclusive(args); got != tc.excl {
			t.Errorf("%q: exclusive %v, want %v", tc.args, got, tc.excl)
		}
	}
}

// TestSortThroughRemote (S68): the list SORT ... STORE stores reaches
// another sidecar through the remote tier, and so does the deletion of
// an empty result.
func TestSortThroughRemote(t *testing.T) {
	a, b := remoteSidecarPair(t, "sort:")
	await := func(c *rawPeer, want string, args ...string) { t.Helper(); awaitReply(t, c, want, args...) }
	b.do("RPUSH", "l", "3", "1", "2")
	b.do("SET", "w_1", "9")
	if r := b.do("SORT", "l", "BY", "w_*", "STORE", "d"); r != ":3\r\n" {
		t.Fatalf("SORT STORE: %q", r)
	}
	await(a, "*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n1\r\n", "LRANGE", "d", "0", "-1")
	if r := a.do("SORT", "none", "STORE", "d"); r != ":0\r\n" {
		t.Fatalf("SORT none STORE: %q", r)
	}
	await(b, ":0\r\n", "EXISTS", "d")
}
