package tier

import (
	"errors"
	"fmt"
	"time"

	"github.com/tiercache/tiercache/backend"

	"github.com/tiercache/tiercache/policy"
)

// ErrUnreadable is returned by SetGet when the value it would return
// cannot be read (a cold device error, counted and logged) while the key
// keeps its version: nothing is stored.
var ErrUnreadable = errors.New("tier: the value SET ... GET would replace cannot be read (cold device error); nothing was stored")

// ErrKeyBusy is returned by GetDel, GetEx and SetGet when the key was rewritten
// between the read and the change on every one of their tries.
var ErrKeyBusy = errors.New("tier: the key was rewritten during the command on every try; retry it")

// getThenTries bounds how often GetDel and GetEx read again after a
// concurrent write to the key.
const getThenTries = 8

// Expiry is the expiry change of GetEx: a relative TTL (> 0), an absolute
// time (non-zero; one in the past deletes the key), or Persist (remove the
// expiry). The zero Expiry changes nothing.
type Expiry struct {
	TTL     time.Duration
	At      time.Time
	Persist bool
}

// GetDel appends key's value to dst and deletes the key, in one step (T16):
// the value returned is the version deleted.
func (c *Cache) GetDel(dst, key []byte) ([]byte, bool, error) {
	return c.getThen(dst, key, func(sh *shard, e *entry, now int64, _ []byte) (*pendOp, error) {
		c.remoteDelLocked(key)
		return c.beginPurgeLocked(sh, key, e)
	})
}

// GetEx appends key's value to dst and changes its expiry, in one step
// (T16). An expiry at or before now deletes the key (the value is still
// returned), as EXPIREAT does. In writethrough mode the value is written
// again with its new expiry, durably, before the call returns (T28).
func (c *Cache) GetEx(dst, key []byte, x Expiry) ([]byte, bool, error) {
	v, ok, _, err := c.GetExChanged(dst, key, x)
	return v, ok, err
}

// GetExChanged is GetEx that also reports whether it changed the key: a
// Persist of a key without an expiry changes nothing (GETEX PERSIST then
// sends no keyspace event).
func (c *Cache) GetExChanged(dst, key []byte, x Expiry) (v []byte, ok, changed bool, err error) {
	if x == (Expiry{}) {
		v, ok, err = c.Get(dst, key)
		return v, ok, false, err
	}
	v, ok, err = c.getThen(dst, key, func(sh *shard, e *entry, now int64, v []byte) (*pendOp, error) {
		var exp int64
		switch {
		case x.Persist:
			if e.exp == 0 {
				return nil, nil
			}
		case x.TTL > 0:
			exp = backend.ExpiryAfter(now, x.TTL)
		default:
			exp = backend.ExpiryAt(x.At)
		}
		changed = true
		if backend.Expired(exp, now) {
			c.remoteDelLocked(key)
			return c.beginPurgeLocked(sh, key, e)
		}
		if c.writeThrough() { // the cold copy carries the expiry (T28)
			k, nv, alloc := joinKV(key, v)
			return c.beginSetLocked(sh, key, k, nv, alloc, exp, e.kind)
		}
		old := e.exp
		e.retime(exp)
		sh.fileExpiry(e, old)
		c.remoteRetimeLocked(key, exp)
		return nil, nil
	})
	return v, ok, ok && changed, err
}

// SetGet is Set that also returns the value it replaced (SET ... GET), in
// one step (T16): old is the version the Set overwrote (appended to dst),
// had is false if the key was absent. stored is false when NX or XX
// prevented the Set; old is returned either way.
func (c *Cache) SetGet(dst, key, value []byte, o SetOptions) (old []byte, had, stored bool, err error) {
	defer c.remoteAwait(key)
	switch {
	case len(key) == 0:
		return dst, false, false, ErrEmptyKey
	case len(value) > c.o.MaxValue:
		return dst, false, false, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(value), c.o.MaxValue)
	}
	if !c.enter() {
		return dst, false, false, ErrClosed
	}
	defer c.exit()
	if err := c.admitWrite(c.waitUntil()); err != nil {
		return dst, false, false, err
	}
	defer c.wtLock(key)()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	unreadable := 0
	for try := 0; try < getThenTries; try++ {
		e := c.lockEntry(sh, key, false, true)
		var ver uint64
		if e != nil && e.live(c.now()) {
			ver = e.ver
		}
		sh.mu.RUnlock()
		old, had = dst, false
		var t policy.Tier
		if ver != 0 {
			errs := c.st.coldErrors.Load()
			var ok bool
			var kind Kind
			if old, t, kind, ok = c.get(dst, key, lo, try == 0); ok && kind != KindString {
				return old[:len(dst)], false, false, ErrWrongKind
			}
			if !ok {
				dst = old[:len(dst)]
				// The key kept its version, yet its value did not read. A
				// cold device error (counted meanwhile) twice gives up:
				// answering a miss would tell NX it may set. Otherwise a
				// copy was caught moving: read again.
				if c.st.coldErrors.Load() != errs && c.versionIs(sh, key, ver) {
					if unreadable++; unreadable == 2 {
						return dst, false, false, ErrUnreadable
					}
				}
				continue
			}
			had = true
		}
		stored, retry, err := c.set(key, value, o, ver, true)
		if !retry {
			if had {
				c.count(key, t, true)
			}
			return old, had, stored, err
		}
		dst = old[:len(dst)]
	}
	return dst, false, false, ErrKeyBusy
}

// versionIs reports whether key is live at version ver.
func (c *Cache) versionIs(sh *shard, key []byte, ver uint64) bool {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	e := sh.m[viewString(key)]
	return e != nil && e.live(c.now()) && e.ver == ver
}

// getThen reads key's value, then applies f to its entry under the shard's
// write lock if the entry still has the version read (versions only grow,
// so an unchanged version means no write came in between): the read and f
// act on one version as one step. A write in between makes it read again,
// up to getThenTries times; f is given the value read. A durable change f
// begins (writethrough) is finished after the lock is released; if it
// fails, the key is unchanged and the error is returned instead of the
// value.
func (c *Cache) getThen(dst, key []byte, f func(sh *shard, e *entry, now int64, v []byte) (*pendOp, error)) ([]byte, bool, error) {
	defer c.remoteAwait(key)
	if len(key) == 0 {
		return dst, false, ErrEmptyKey
	}
	if !c.enter() {
		return dst, false, ErrClosed
	}
	defer c.exit()
	defer c.wtLock(key)()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	for try := 0; try < getThenTries; try++ {
		e := c.lockEntry(sh, key, false, true)
		if e == nil || !e.live(c.now()) {
			sh.mu.RUnlock()
			c.count(key, policy.None, false)
			return dst, false, nil
		}
		ver := e.ver
		sh.mu.RUnlock()
		v, t, kind, ok := c.get(dst, key, lo, try == 0)
		if !ok {
			c.count(key, t, false)
			return v, false, nil
		}
		if kind != KindString {
			c.count(key, t, true)
			return v[:len(dst)], false, ErrWrongKind
		}
		sh.mu.Lock()
		e = sh.m[viewString(key)]
		now := c.now()
		if e != nil && e.ver == ver && e.live(now) {
			op, err := f(sh, e, now, v[len(dst):])
			sh.mu.Unlock()
			if err == nil {
				err = c.finishPurge(op)
			}
			if err != nil {
				return v[:len(dst)], false, err
			}
			c.count(key, t, true)
			return v, true, nil
		}
		sh.mu.Unlock()
		dst = v[:len(dst)]
	}
	return dst, false, ErrKeyBusy
}
