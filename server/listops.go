package server

import (
	"errors"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/list"
)

// listOps are the list changes that both a list command and a push
// serving blocked clients (wake) make. Each runs as one Cache.Update, whose
// function may run more than once: it only computes (value/list), and what
// it answers is copied into the reused buffers here (the current value is
// valid only during the call).
type listOps struct {
	cache  *tier.Cache
	limits list.Limits
	val    []byte   // the new value being built
	out    []byte   // copies of the elements answered
	outs   [][]byte // out, split into elements
	items  [][]byte // a decoded list, aliasing the value
	// served are the blocked clients a command of this connection served
	// (its pushes woke them, or it was BLPOP or BZPOPMIN served at once),
	// for their keyspace events (servedEvents); collected while keyHooks.
	served []servedPop
}

// servedPop is one pop handed to a blocked client: from key, and, for
// BLMOVE, pushed onto dst.
type servedPop struct {
	key, dst     []byte
	left, toLeft bool
	move         bool
	zpop         zpopEnd
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
		o.items, o.outs = nil, nil
	}
}

// answer copies the elements of a reply out of the current value.
func (o *listOps) answer(items ...[]byte) {
	o.out, o.outs = o.out[:0], o.outs[:0]
	for _, it := range items {
		o.out = append(o.out, it...)
	}
	off := 0
	for _, it := range items {
		o.outs = append(o.outs, o.out[off:off+len(it):off+len(it)])
		off += len(it)
	}
}

// current checks that cur is a list and returns its count and elements.
func current(cur tier.Current) (n int, body []byte, err error) {
	if cur.Kind != kindList {
		return 0, nil, tier.ErrWrongKind
	}
	return list.Header(cur.Value)
}

// push adds vals at the head (left, each in turn, so the last ends up
// first) or the tail of key's list and returns its new length. A missing
// key is created unless onlyExisting (then the length is 0).
func (o *listOps) push(key []byte, vals [][]byte, left, onlyExisting bool) (int, error) {
	var length int
	err := o.cache.Update(key, func(cur tier.Current) (tier.Change, error) {
		length = 0
		var n int
		var body []byte
		if cur.Exists {
			var err error
			if n, body, err = current(cur); err != nil {
				return tier.Change{}, err
			}
		} else if onlyExisting {
			return tier.Change{Op: tier.Keep}, nil
		}
		b, total, err := list.Push(o.val, n, body, vals, left, o.limits)
		if err != nil {
			return tier.Change{}, err
		}
		o.val, length = b, total
		return tier.Change{Op: tier.Store, Value: b, Kind: kindList}, nil
	})
	return length, err
}

// pop removes up to count elements from the head (left) or the tail of
// key's list and answers them in o.outs, in the order popped; exists is
// false if the key is absent. An emptied list is removed.
func (o *listOps) pop(key []byte, left bool, count int) (exists bool, err error) {
	err = o.cache.Update(key, func(cur tier.Current) (tier.Change, error) {
		exists = cur.Exists
		o.answer()
		if !cur.Exists {
			return tier.Change{Op: tier.Keep}, nil
		}
		n, body, err := current(cur)
		if err != nil {
			return tier.Change{}, err
		}
		k := min(count, n)
		if k == 0 {
			return tier.Change{Op: tier.Keep}, nil
		}
		b, popped, err := list.Pop(o.val, o.items, n, body, k, left)
		if err != nil {
			return tier.Change{}, err
		}
		o.items = popped
		o.answer(popped...)
		if b == nil {
			return tier.Change{Op: tier.Remove}, nil
		}
		o.val = b
		return tier.Change{Op: tier.Store, Value: b, Kind: kindList}, nil
	})
	return exists, err
}

// rewrite decodes key's list into o.items, lets f change it (returning
// whether it did), and stores the result (removing an emptied list).
// exists is false if the key is absent; f is not called then.
func (o *listOps) rewrite(key []byte, f func(items [][]byte) ([][]byte, bool, error)) (exists bool, err error) {
	err = o.cache.Update(key, func(cur tier.Current) (tier.Change, error) {
		exists = cur.Exists
		if !cur.Exists {
			return tier.Change{Op: tier.Keep}, nil
		}
		if cur.Kind != kindList {
			return tier.Change{}, tier.ErrWrongKind
		}
		items, err := list.Items(o.items[:0], cur.Value)
		o.items = items
		if err != nil {
			return tier.Change{}, err
		}
		items, changed, err := f(items)
		if err != nil || !changed {
			return tier.Change{Op: tier.Keep}, err
		}
		if len(items) == 0 {
			return tier.Change{Op: tier.Remove}, nil
		}
		body := 0
		for _, it := range items {
			body += list.ItemSize(it)
		}
		if err := o.limits.Check(len(items), list.Size(len(items), body)); err != nil {
			return tier.Change{}, err
		}
		o.val = list.Encode(o.val, items)
		return tier.Change{Op: tier.Store, Value: o.val, Kind: kindList}, nil
	})
	return exists, err
}

// move pops one element from src's head (fromLeft) or tail and pushes it
// onto dst's head (toLeft) or tail, answering it in o.outs[0]; moved is
// false when src is absent. Redis's order of checks: an absent src answers
// nil, then src and dst must be lists. For two keys the move is two
// Updates (the cache changes one key in one step): the element is popped,
// then pushed, and put back on src if the push fails, so it is never lost
// nor duplicated, though another client may see it on neither list for an
// instant.
func (o *listOps) move(src, dst []byte, fromLeft, toLeft bool) (moved bool, err error) {
	if string(src) == string(dst) {
		return o.rotate(src, fromLeft, toLeft)
	}
	err = o.cache.Update(src, func(cur tier.Current) (tier.Change, error) {
		moved = false
		if !cur.Exists {
			return tier.Change{Op: tier.Keep}, nil
		}
		if cur.Kind != kindList {
			return tier.Change{}, tier.ErrWrongKind
		}
		if k, ok := o.cache.KindOf(dst); ok && k != kindList {
			return tier.Change{}, tier.ErrWrongKind
		}
		if err := o.pushFits(dst, cur, fromLeft); err != nil {
			return tier.Change{}, err
		}
		moved = true
		return tier.Change{Op: tier.Keep}, nil
	})
	if err != nil || !moved {
		return false, err
	}
	exists, err := o.pop(src, fromLeft, 1)
	if err != nil || !exists || len(o.outs) == 0 {
		return false, err
	}
	v := append([]byte(nil), o.outs[0]...)
	if _, err := o.push(dst, [][]byte{v}, toLeft, false); err != nil {
		if _, uerr := o.push(src, [][]byte{v}, fromLeft, false); uerr != nil {
			return false, errors.Join(err, uerr)
		}
		return false, err
	}
	o.answer(v)
	return true, nil
}

// pushFits checks, before move pops anything, that the element it would
// take from src (cur) fits dst's limits, so a move refused for dst's size
// changes nothing (src keeps its element and its TTL). LMOVE runs with
// every other command held off (S23), so the check still holds when the
// push runs.
func (o *listOps) pushFits(dst []byte, cur tier.Current, fromLeft bool) error {
	n, body, err := list.Header(cur.Value)
	if err != nil || n == 0 {
		return err
	}
	item, err := list.End(n, body, fromLeft)
	if err != nil {
		return err
	}
	total, size := 1, list.Size(1, list.ItemSize(item))
	if v, _, _, ok, _, err := o.cache.ViewAny(o.val[:0], dst); err != nil {
		return err
	} else if ok {
		dn, dbody, err := list.Header(v)
		if err != nil {
			return err
		}
		total, size = dn+1, list.Size(dn+1, len(dbody)+list.ItemSize(item))
	}
	return o.limits.Check(total, size)
}

// rotate is move of a list onto itself, in one Update.
func (o *listOps) rotate(key []byte, fromLeft, toLeft bool) (bool, error) {
	exists, err := o.rewrite(key, func(items [][]byte) ([][]byte, bool, error) {
		items, v, err := list.Rotate(items, fromLeft, toLeft)
		if err != nil {
			return items, false, err
		}
		o.answer(v)
		return items, true, nil
	})
	return exists && err == nil, err
}
