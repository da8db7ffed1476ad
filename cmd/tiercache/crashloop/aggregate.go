package crashloop

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Aggregates (invariant 7). Each worker also owns a list and a hash: RPUSH
// and LPOP on the list, whose elements name their push ("<key>/<seq>"),
// HSET and HDEL of eight fields on the hash, whose values name their
// HSET. A list's state is the sequence of the pushes it holds: every state
// it ever had is a run of one of its histories, the pushes since it was
// empty or since a restart gave it an older state (the elements it came
// back with, then the pushes after). A hash's state is the HSET of each
// field's value.

// aggState is what an aggregate holds after some prefix of its operations.
type aggState struct {
	elems  []uint64          // a list: the pushes it holds, head first
	fields map[string]uint64 // a hash: field → the HSET of its value
}

func (s aggState) clone() aggState {
	return aggState{elems: slices.Clone(s.elems), fields: maps.Clone(s.fields)}
}

func (s aggState) equal(o aggState) bool {
	return slices.Equal(s.elems, o.elems) && maps.Equal(s.fields, o.fields)
}

// aggLog is one aggregate's history: as keyLog, and a list's histories,
// every HSET of each field of a hash.
type aggLog struct {
	list    bool
	ops     int // operations issued
	acked   aggState
	pending *aggState
	runs    [][]uint64          // a list's histories; pushes go on the last
	hsets   map[string][]uint64 // a hash's HSETs of each field
}

func listKey(w int) string { return fmt.Sprintf("w%d:list", w) }
func hashKey(w int) string { return fmt.Sprintf("w%d:hash", w) }

func aggElem(key string, seq uint64) string { return key + "/" + strconv.FormatUint(seq, 10) }

// aggOp runs one operation of worker w on its list or hash, recording it
// in l (key, the key); false when the connection failed (the kill: the
// operation stays pending).
func aggOp(ctx context.Context, rc *redis.Client, key string, l *aggLog, seq *uint64, pick int) bool {
	next := l.acked.clone()
	l.ops++
	var err error
	switch {
	case l.list && pick < 60:
		*seq++
		next.elems = append(next.elems, *seq)
		if len(l.runs) == 0 {
			l.runs = [][]uint64{nil}
		}
		l.runs[len(l.runs)-1] = append(l.runs[len(l.runs)-1], *seq)
		l.pending = &next
		err = rc.RPush(ctx, key, aggElem(key, *seq)).Err()
	case l.list:
		if len(next.elems) > 0 {
			next.elems = next.elems[1:]
		}
		l.pending = &next
		err = rc.LPop(ctx, key).Err()
		if err == redis.Nil {
			err = nil
		}
	case pick < 70:
		*seq++
		f := "f" + strconv.Itoa(pick%8)
		if next.fields == nil {
			next.fields = map[string]uint64{}
		}
		next.fields[f] = *seq
		l.hsets[f] = append(l.hsets[f], *seq)
		l.pending = &next
		err = rc.HSet(ctx, key, f, aggElem(key, *seq)).Err()
	default:
		delete(next.fields, "f"+strconv.Itoa(pick%8))
		l.pending = &next
		err = rc.HDel(ctx, key, "f"+strconv.Itoa(pick%8)).Err()
	}
	if err != nil {
		return false
	}
	if len(next.fields) == 0 {
		next.fields = nil
	}
	l.acked, l.pending = next, nil
	return true
}

// readAgg reads an aggregate's state through the sidecar; a value that
// names no push of the key is torn.
func readAgg(ctx context.Context, rc *redis.Client, key string, l *aggLog) (aggState, error) {
	var s aggState
	parse := func(v string) (uint64, error) {
		k, n, ok := strings.Cut(v, "/")
		seq, err := strconv.ParseUint(n, 10, 64)
		if !ok || k != key || err != nil {
			return 0, fmt.Errorf("%s holds %q, which names no push of it (torn or foreign)", key, v)
		}
		return seq, nil
	}
	if l.list {
		vals, err := rc.LRange(ctx, key, 0, -1).Result()
		if err != nil {
			return s, err
		}
		for _, v := range vals {
			seq, err := parse(v)
			if err != nil {
				return s, err
			}
			s.elems = append(s.elems, seq)
		}
		return s, nil
	}
	m, err := rc.HGetAll(ctx, key).Result()
	if err != nil {
		return s, err
	}
	for f, v := range m {
		seq, err := parse(v)
		if err != nil {
			return s, err
		}
		if s.fields == nil {
			s.fields = map[string]uint64{}
		}
		s.fields[f] = seq
	}
	return s, nil
}

// isRun reports whether elems is a run of one of the histories (some
// state the list had).
func isRun(elems []uint64, runs [][]uint64) bool {
	if len(elems) == 0 {
		return true
	}
	for _, pushes := range runs {
		i := slices.Index(pushes, elems[0])
		if i >= 0 && len(pushes)-i >= len(elems) && slices.Equal(pushes[i:i+len(elems)], elems) {
			return true
		}
	}
	return false
}

// checkAggs reads every aggregate through the restarted sidecar: in an
// exact mode its state must be the acknowledged one or the one its
// operation in flight gives; otherwise one it could have had (a list a run
// of its pushes, a hash's values HSETs of their fields). With held, it is
// the read before a drain-mode clean stop: another state it could have had
// is one the cache came to by dropping the key while it ran.
func checkAggs(t testing.TB, rc *redis.Client, aggs map[string]*aggLog, exact, held bool, tally *Tally) {
	t.Helper()
	ctx := context.Background()
	for _, key := range slices.Sorted(maps.Keys(aggs)) {
		l := aggs[key]
		tally.Keys++
		got, err := readAgg(ctx, rc, key, l)
		if err != nil {
			tally.Torn++
			t.Error(err)
			continue
		}
		l.settle(t, key, got, exact, held, tally)
	}
}

// settle checks got, the state key came back with after a restart,
// against l and makes it the acknowledged state. A list whose push was in
// flight and not applied (got is the acknowledged state) drops that push
// from its history: pushes from here go onto the state it came back with,
// as after a list that came back older.
func (l *aggLog) settle(t testing.TB, key string, got aggState, exact, held bool, tally *Tally) {
	t.Helper()
	switch {
	case got.equal(l.acked), l.pending != nil && got.equal(*l.pending):
		if l.list && l.pending != nil && !got.equal(*l.pending) && len(l.pending.elems) > len(l.acked.elems) {
			l.runs = append(l.runs, slices.Clone(got.elems))
		}
	case exact:
		tally.Lost++
		t.Errorf("%s after the restart: %v; acknowledged %v, in flight %v", key, got, l.acked, l.pending)
	case l.list && !isRun(got.elems, l.runs):
		tally.Torn++
		t.Errorf("%s after the restart: %v, no run of its histories %v", key, got.elems, l.runs)
	default:
		for f, seq := range got.fields {
			if !slices.Contains(l.hsets[f], seq) {
				tally.Torn++
				t.Errorf("%s after the restart: field %s from HSET %d, which was never of that field", key, f, seq)
			}
		}
		if held {
			tally.Dropped++
		} else {
			tally.StaleAfterKill++
		}
		if l.list { // pushes from here go onto the state it came back with
			l.runs = append(l.runs, slices.Clone(got.elems))
		}
	}
	l.acked, l.pending = got, nil
}
