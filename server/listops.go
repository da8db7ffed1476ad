package server

import (
	"errors"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/list"
)

// listOps are the list changes that both a list command and a push
// serving blocked clients (wake) make. Each is one Cache.Edit on the
// list's live structure (a list.Quick): it changes what it touches, in
// place. Its function may run more than once (writethrough mode), so it
// only changes the structure and notes what it answers, copied into the
// reused buffers here (the structure's elements are valid only during
// the call).
type listOps struct {
	cache  *tier.Cache
	limits list.Limits
	val    []byte   // a record being built (BZPOPMIN's store)
	out    []byte   // copies of the elements answered
	outs   [][]byte // out, split into elements
	ends   []int    // where each element answered ends in out
	items  [][]byte // a list's elements, aliasing its structure
	// served are the blocked clients a command of this connection served
	// (its pushes woke them, or it was BLPOP or BZPOPMIN served at once),
	// for their keyspace events (servedEvents); collected while keyHooks.
	served []servedPop
	// handoffs are the results of the waiters served, handed over after
	// the command (handOff).
	handoffs []handoff
	// now is the running command's time (conn.now) for push and pop, set
	// by a command that does not wait; 0 reads the cache's clock.
	now int64
}

// edit is Cache.Edit of key's list, at o.now when set.
func (o *listOps) edit(key []byte, create bool, f func(v tier.Live) (tier.EditResult, error)) (bool, error) {
	if o.now != 0 {
		return o.cache.EditAt(key, lists, create, o.now, f)
	}
	return o.cache.Edit(key, lists, create, f)
}

// servedPop is one pop handed to a blocked client: from key, and, for
// BLMOVE, pushed onto dst.
type servedPop struct {
	key, dst     []byte
	left, toLeft bool
	move         bool
	zpop         zpopEnd
	to           *conn // the client served
}

// maxKeptBuffer is the largest buffer listOps keeps between commands.
const maxKeptBuffer = 1 << 20

// release drops buffers grown past maxKeptBuffer by a large list.
func (o *listOps) release() {
	if cap(o.val) > maxKeptBuffer {
		o.val = nil
	}
	if cap(o.out) > maxKeptBuffer {
		o.out = nil
	}
	if cap(o.items) > maxKeptBuffer/16 {
		o.items, o.outs, o.ends = nil, nil, nil
	}
	clear(o.items[:cap(o.items)]) // the structures they alias
}

// answer starts a reply of copied elements (note adds them, answered
// splits them into outs).
func (o *listOps) answer() {
	o.out, o.outs, o.ends = o.out[:0], o.outs[:0], o.ends[:0]
}

// note copies one element of the reply.
func (o *listOps) note(it []byte) {
	o.out = append(o.out, it...)
	o.ends = append(o.ends, len(o.out))
}

// answered splits the copies note made into outs.
func (o *listOps) answered() {
	start := 0
	for _, end := range o.ends {
		o.outs = append(o.outs, o.out[start:end:end])
		start = end
	}
}

// copyOuts is a copy of the elements answered (outs), in one buffer,
// for a waiter served after the buffers are reused.
func (o *listOps) copyOuts() [][]byte {
	buf := append([]byte(nil), o.out...)
	vals := make([][]byte, len(o.ends))
	start := 0
	for i, end := range o.ends {
		vals[i] = buf[start:end:end]
		start = end
	}
	return vals
}

// quick is the list structure an Edit or Read function is given.
func quick(v tier.Live) *list.Quick { return v.(*list.Quick) }

// push adds vals at the head (left, each in turn, so the last ends up
// first) or the tail of key's list and returns its new length. A missing
// key is created unless onlyExisting (then the length is 0).
func (o *listOps) push(key []byte, vals [][]byte, left, onlyExisting bool) (int, error) {
	var length int
	_, err := o.edit(key, !onlyExisting, func(v tier.Live) (tier.EditResult, error) {
		q := quick(v)
		if err := o.limits.Check(q.Len()+len(vals), q.PushSize(vals)); err != nil {
			return tier.Unchanged, err
		}
		q.Push(vals, left)
		length = q.Len()
		return tier.Changed, nil
	})
	return length, err
}

// pop removes up to count elements from the head (left) or the tail of
// key's list and answers them in o.outs, in the order popped; exists is
// false if the key is absent. An emptied list is removed.
func (o *listOps) pop(key []byte, left bool, count int) (exists bool, err error) {
	o.answer()
	exists, err = o.edit(key, false, func(v tier.Live) (tier.EditResult, error) {
		o.answer()
		q := quick(v)
		if count <= 0 || q.Len() == 0 {
			return tier.Unchanged, nil
		}
		q.Pop(count, left, o.note)
		return emptiedOr(q), nil
	})
	o.answered()
	return exists, err
}

// emptiedOr is Changed, or Emptied when q has no element left.
func emptiedOr(q *list.Quick) tier.EditResult {
	if q.Len() == 0 {
		return tier.Emptied
	}
	return tier.Changed
}

// rewrite gives f key's elements (aliasing its structure), lets it change
// them (returning whether it did), and makes them the list (removing an
// emptied one): LSET, LINSERT and LREM, O(list) as in Redis. exists is
// false if the key is absent; f is not called then.
func (o *listOps) rewrite(key []byte, f func(items [][]byte) ([][]byte, bool, error)) (exists bool, err error) {
	return o.cache.Edit(key, lists, false, func(v tier.Live) (tier.EditResult, error) {
		q := quick(v)
		items, changed, err := f(q.Items(o.items[:0]))
		o.items = items
		if err != nil || !changed {
			return tier.Unchanged, err
		}
		if len(items) == 0 {
			return tier.Emptied, nil
		}
		body := 0
		for _, it := range items {
			body += list.ItemSize(it)
		}
		if err := o.limits.Check(len(items), list.Size(len(items), body)); err != nil {
			return tier.Unchanged, err
		}
		q.Replace(items)
		return tier.Changed, nil
	})
}

// trim keeps the elements of key's list from start to stop (LTRIM's
// range), removing an emptied list; exists is false if the key is absent.
func (o *listOps) trim(key []byte, start, stop int64) (exists bool, err error) {
	return o.cache.Edit(key, lists, false, func(v tier.Live) (tier.EditResult, error) {
		q := quick(v)
		lo, hi := list.Range(start, stop, q.Len())
		if hi-lo == q.Len() {
			return tier.Unchanged, nil
		}
		q.Trim(lo, hi)
		return emptiedOr(q), nil
	})
}

// move pops one element from src's head (fromLeft) or tail and pushes it
// onto dst's head (toLeft) or tail, answering it in o.outs[0]; moved is
// false when src is absent. Redis's order of checks: an absent src answers
// nil, then src and dst must be lists. For two keys the move is two
// Edits (the cache changes one key in one step): the element is popped,
// then pushed, and put back on src if the push fails, so it is never lost
// nor duplicated, though another client may see it on neither list for an
// instant.
func (o *listOps) move(src, dst []byte, fromLeft, toLeft bool) (moved bool, err error) {
	if string(src) == string(dst) {
		return o.rotate(src, fromLeft, toLeft)
	}
	var item []byte
	exists, err := o.cache.Read(src, lists, func(v tier.Live) error {
		item = append(o.out[:0], quick(v).End(fromLeft)...)
		return nil
	})
	if err != nil || !exists {
		return false, err
	}
	o.out = item
	if err := o.pushFits(dst, item); err != nil {
		return false, err
	}
	if exists, err := o.pop(src, fromLeft, 1); err != nil || !exists || len(o.outs) == 0 {
		return false, err
	}
	v := append([]byte(nil), o.outs[0]...)
	if _, err := o.push(dst, [][]byte{v}, toLeft, false); err != nil {
		if _, uerr := o.push(src, [][]byte{v}, fromLeft, false); uerr != nil {
			return false, errors.Join(err, uerr)
		}
		return false, err
	}
	o.answer()
	o.note(v)
	o.answered()
	return true, nil
}

// pushFits checks, before move pops anything, that dst is a list (or
// absent) and that item fits its limits, so a move refused for dst
// changes nothing (src keeps its element and its TTL). LMOVE runs with
// every other command held off (S23), so the check still holds when the
// push runs.
func (o *listOps) pushFits(dst, item []byte) error {
	total, size := 1, list.Size(1, list.ItemSize(item))
	_, err := o.cache.Read(dst, lists, func(v tier.Live) error {
		q := quick(v)
		total, size = q.Len()+1, q.PushSize([][]byte{item})
		return nil
	})
	if err != nil {
		return err
	}
	return o.limits.Check(total, size)
}

// rotate is move of a list onto itself, in one Edit.
func (o *listOps) rotate(key []byte, fromLeft, toLeft bool) (bool, error) {
	o.answer()
	exists, err := o.cache.Edit(key, lists, false, func(v tier.Live) (tier.EditResult, error) {
		o.answer()
		q := quick(v)
		if q.Len() == 0 {
			return tier.Unchanged, nil
		}
		q.Pop(1, fromLeft, o.note)
		q.Push([][]byte{o.out}, toLeft)
		return tier.Changed, nil
	})
	o.answered()
	return exists && err == nil, err
}
