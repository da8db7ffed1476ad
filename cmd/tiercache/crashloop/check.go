package crashloop

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// keyState is what a key holds after some prefix of its operations.
type keyState struct {
	present bool
	seq     uint64    // the SET that wrote the value
	size    int       // its length
	exp     time.Time // zero: no expiry; else the earliest the server may have set
	expHi   time.Time // the latest it may have set (the command's reply came then)
}

// keyLog is one key's history: the state after its last acknowledged
// operation, the state its operation in flight at the kill would give, and
// every value ever issued for it (to tell an old value from a torn one).
type keyLog struct {
	acked   keyState
	pending *keyState
	issued  map[uint64]int // seq → size
}

// Tally counts what the checks found.
type Tally struct {
	Keys, Lost, Resurrected, Vanished, Torn int
	StaleAfterKill                          int // older or missing after a kill in a non-exact mode
	Dropped                                 int // dropped while running (drain is a cache), once the cold store reclaimed
}

// Bad is the number of keys that broke a promise.
func (c Tally) Bad() int { return c.Lost + c.Resurrected + c.Vanished + c.Torn }

// liveAt reports whether s holds a value at t, and whether that is certain
// (an expiry within a second of t may have passed on either side;
// invariant 2).
func liveAt(s keyState, t time.Time) (live, sure bool) {
	if !s.present {
		return false, true
	}
	if s.exp.IsZero() {
		return true, true
	}
	switch {
	case t.Before(s.exp.Add(-time.Second)):
		return true, true
	case t.After(s.expHi.Add(time.Second)):
		return false, true
	}
	return t.Before(s.exp), false
}

// matches reports whether a read (v, found), sent at sent and answered at
// got, is what s gives. The server judges expiry at one moment between the
// two (its command's time, taken when the command starts, as Redis's
// command time snapshot), so a value is checked at the earliest and a nil
// at the latest.
func matches(key string, s keyState, v []byte, found bool, sent, got time.Time) bool {
	t := got
	if found {
		t = sent
	}
	live, sure := liveAt(s, t)
	switch {
	case !found:
		return !live || !sure
	case !live && sure:
		return false
	}
	return len(v) == s.size && string(v) == string(crashValue(key, s.seq, s.size))
}

// checkKey classifies one key read after a restart (invariants 1 and 3);
// it returns the state the key now has (the log's acknowledged state from
// here on) and, for a broken promise, what broke.
func checkKey(key string, l *keyLog, v []byte, found bool, sent, answered time.Time, exact bool, tally *Tally) (keyState, string) {
	tally.Keys++
	if matches(key, l.acked, v, found, sent, answered) {
		return l.acked, ""
	}
	if l.pending != nil && matches(key, *l.pending, v, found, sent, answered) {
		return *l.pending, ""
	}
	var seq uint64
	if found {
		for s, size := range l.issued {
			if len(v) == size && string(v) == string(crashValue(key, s, size)) {
				seq = s
			}
		}
		if seq == 0 {
			tally.Torn++
			return keyState{}, fmt.Sprintf("%s: %d bytes that no SET of it wrote (torn or foreign)", key, len(v))
		}
	}
	got := keyState{present: found, seq: seq, size: len(v)}
	if !exact {
		tally.StaleAfterKill++ // drain after a kill promises only values issued for the key
		return got, ""
	}
	ackLive, _ := liveAt(l.acked, sent) // found here: judged at the earliest, as matches does
	switch {
	case !found && l.pending != nil && l.pending.present:
		tally.Vanished++
		return got, fmt.Sprintf("%s: reads nil; acknowledged %+v, in flight %+v (vanished)", key, l.acked, *l.pending)
	case !found:
		tally.Lost++
		return got, fmt.Sprintf("%s: reads nil; acknowledged %+v (lost)", key, l.acked)
	case !ackLive:
		tally.Resurrected++
		return got, fmt.Sprintf("%s: reads SET %d; acknowledged %+v (resurrected)", key, seq, l.acked)
	default:
		tally.Lost++
		return got, fmt.Sprintf("%s: reads SET %d; acknowledged %+v (an acknowledged write lost)", key, seq, l.acked)
	}
}

// checkAll reads every key through the restarted sidecar.
// With held, it is the read before a drain-mode clean stop: a key that
// reads nil was dropped while the cache ran (lost, unless the cold store
// reclaimed records), and is absent from then on.
func checkAll(t testing.TB, rc *redis.Client, logs map[string]*keyLog, exact, held bool, tally *Tally) {
	t.Helper()
	ctx := context.Background()
	keys := make([]string, 0, len(logs))
	for k := range logs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i := 0; i < len(keys); i += 50 {
		batch := keys[i:min(i+50, len(keys))]
		sent := time.Now()
		vals, err := rc.MGet(ctx, batch...).Result()
		if err != nil {
			t.Fatalf("MGET after the restart: %v", err)
		}
		now := time.Now()
		for j, k := range batch {
			s, found := vals[j].(string)
			l := logs[k]
			if held && !found {
				if live, _ := liveAt(l.acked, now); live {
					if !coldReclaimed(ctx, rc) {
						tally.Lost++
						t.Errorf("%s: reads nil before a clean stop; acknowledged %+v, and the cold store reclaimed nothing (dropped while it had room)", k, l.acked)
					}
					tally.Dropped++
				}
				l.acked = keyState{}
				continue
			}
			state, bad := checkKey(k, l, []byte(s), found, sent, now, exact, tally)
			if bad != "" {
				t.Error(bad)
			}
			if state.present && (!exact || l.pending != nil || state.exp.IsZero() && !l.acked.exp.IsZero()) {
				// The expiry the key came back with: after a drain-mode
				// kill its cold copy may carry an older one; with an
				// operation in flight (a PEXPIRE, or a SET that drops the
				// expiry) either expiry may hold, the value alone does not
				// tell which (invariant 5).
				before := time.Now()
				ttl, err := rc.PTTL(ctx, k).Result()
				if err != nil {
					t.Fatalf("PTTL after the restart: %v", err)
				}
				got := serverExpiry(state, ttl, before, time.Now())
				if ttl == -2 { // expired since the MGET
					got = keyState{}
				} else if exact && !expiryFits(l.acked, got) && (l.pending == nil || !expiryFits(*l.pending, got)) {
					tally.Lost++
					t.Errorf("%s: expiry %+v after the restart; acknowledged %+v, in flight %v (an acknowledged expiry lost)", k, got, l.acked, l.pending)
				}
				state = got
			}
			l.acked, l.pending = state, nil
		}
	}
}

// serverExpiry is s with the expiry a PTTL reply of ttl (sent at before,
// answered at after) gives: none for -1, else the window it lies in.
func serverExpiry(s keyState, ttl time.Duration, before, after time.Time) keyState {
	s.exp, s.expHi = time.Time{}, time.Time{}
	if ttl > 0 {
		s.exp, s.expHi = before.Add(ttl-time.Millisecond), after.Add(ttl) // PTTL is whole milliseconds
	}
	return s
}

// expiryFits reports whether got's expiry (from serverExpiry) is the one
// state s gives: both none, or windows that overlap within a second
// (invariants 2 and 5).
func expiryFits(s, got keyState) bool {
	if s.exp.IsZero() || got.exp.IsZero() {
		return s.exp.IsZero() == got.exp.IsZero()
	}
	return !got.exp.After(s.expHi.Add(time.Second)) && !got.expHi.Before(s.exp.Add(-time.Second))
}
