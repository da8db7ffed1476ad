package tier

import (
	"context"
	"fmt"

	"github.com/tiercache/tiercache/flusher"
)

// In writethrough mode Rename and Copy make their change durable before
// it is published (T28): the destination's new value is written and
// synced, then (Rename) the source's delete is run and synced, and only
// then do readers see the destination written and the source gone, both
// at once under both shard locks (T26). Until then they see both keys as
// they were. If the destination's write fails nothing changed; if the
// source's delete fails, the destination is put back as it was (its old
// value written again, or the key deleted), so an error still means that
// nothing changed, in this run and after a restart. Only if that undo
// fails too are both keys left holding the value (in memory as in cold),
// and the error says so. A SIGKILL between the two steps leaves both keys
// holding the value: the move in flight is half done, nothing is lost.

// carryPrior is the destination's state a durable Rename may have to put
// back: its version (0: absent), value, expiry and kind.
type carryPrior struct {
	ver  uint64
	val  []byte
	exp  int64
	kind Kind
}

// readPrior reads dst's current state for carryDurable's undo; false if
// its value did not read (the caller reads again).
func (c *Cache) readPrior(dst []byte, dlo uint64, dsh *shard) (carryPrior, bool) {
	e := c.lockEntry(dsh, dst, false, true)
	if e == nil || !e.live(c.now()) {
		dsh.mu.RUnlock()
		return carryPrior{}, true
	}
	p := carryPrior{ver: e.ver, exp: e.exp, kind: e.kind}
	dsh.mu.RUnlock()
	v, _, _, ok := c.get(nil, dst, dlo, false)
	p.val = v
	return p, ok
}

// matches reports whether dst's entry ed is still in the state p read
// (both shard locks held): versions only grow, so the value read is the
// one ed names.
func (p carryPrior) matches(ed *entry, now int64) bool {
	if p.ver == 0 {
		return ed == nil || !ed.live(now)
	}
	return ed != nil && ed.live(now) && ed.ver == p.ver
}

// carryDurable is carry's writethrough path once its conditions held
// (both shard locks held, taken in shard order — aFirst as lockShards —
// and released on return; neither key has a change in flight): src at
// version ver is carried to dst as k, nv (from joinKV, alloc its bytes)
// with expiry exp and kind, and with move src is deleted. done is false
// when, without overwrite, a write of dst that began meanwhile took it
// first (it came before the move, which then does nothing).
//
// A move reserves src in the pend map at once (a version with no write
// yet), so another move of src waits for this one instead of carrying
// the same value too; a change of src that begins meanwhile replaces the
// reservation and decides src, as if it came right after the move.
func (c *Cache) carryDurable(ssh, dsh *shard, aFirst bool, src, dst []byte, ver uint64, k, nv []byte, alloc int, exp int64, kind Kind, move, overwrite bool, prior carryPrior) (done bool, err error) {
	var opS *pendOp
	if move {
		sk := append([]byte(nil), src...)
		opS = &pendOp{sh: ssh, key: sk, ver: c.nextVersion()}
		if ssh.pend == nil {
			ssh.pend = make(map[string]uint64)
		}
		ssh.pend[string(sk)] = opS.ver
	}
	dver := c.nextVersion()
	opD, err := c.beginLocked(dsh, k, dver, &flusher.Item{Key: k, Value: nv, Version: dver, Expiry: exp, Flags: coldFlags(kind)})
	if err == nil {
		c.st.coldWrites.Add(1)
		unlockShards(ssh, dsh)
		err = opD.it.Await(context.Background())
		lockShards(ssh, dsh, aFirst)
		if err != nil {
			opD.latestLocked()
		}
	}
	if err != nil {
		if opS != nil {
			opS.latestLocked()
		}
		unlockShards(ssh, dsh)
		return false, fmt.Errorf("tier: write %d bytes to cold (nothing changed): %w", len(nv), err)
	}
	if move {
		switch es := ssh.m[viewString(src)]; {
		case !overwrite && !opD.isLatestLocked():
			// dst was written after all: that write came first.
			opS.latestLocked()
			unlockShards(ssh, dsh)
			return false, nil
		case opS.isLatestLocked() && es != nil && es.ver == ver && es.live(c.now()):
			op, err := c.beginLocked(ssh, opS.key, opS.ver, &flusher.Item{Key: opS.key, Delete: true, Version: opS.ver})
			if err == nil {
				opS = op
				c.st.coldDeletes.Add(1)
				unlockShards(ssh, dsh)
				err = opS.it.Await(context.Background())
				lockShards(ssh, dsh, aFirst)
			}
			latest := opS.latestLocked()
			if err != nil {
				c.coldError("delete", err)
				return false, c.undoCarry(ssh, dsh, dst, opD, prior, k, nv, alloc, exp, kind, err)
			}
			if latest {
				c.publishLocked(opS)
				c.remoteDelLocked(src)
			}
		default:
			opS.latestLocked() // a newer change of src decides it
		}
	}
	if opD.latestLocked() {
		c.placeDurableLocked(dsh, dst, k, nv, alloc, dver, exp, kind)
	}
	unlockShards(ssh, dsh)
	return true, nil
}

// undoCarry puts dst back as prior after a move's source delete failed
// (cause), both shard locks held and released on return: dst's old value
// is written again, or dst deleted, durably. If a later change of dst is
// pending it owns dst, and nothing needs putting back.
func (c *Cache) undoCarry(ssh, dsh *shard, dst []byte, opD *pendOp, prior carryPrior, k, nv []byte, alloc int, exp int64, kind Kind, cause error) error {
	failed := fmt.Errorf("tier: delete the source of a move of %d bytes in cold (nothing changed): %w", len(nv), cause)
	if !opD.latestLocked() {
		unlockShards(ssh, dsh)
		return failed
	}
	var op *pendOp
	var err error
	if prior.ver != 0 {
		pk, pv, palloc := joinKV(dst, prior.val)
		op, err = c.beginSetLocked(dsh, dst, pk, pv, palloc, prior.exp, prior.kind)
	} else {
		c.remoteDelLocked(dst)
		op, err = c.beginPurgeLocked(dsh, dst, nil)
	}
	unlockShards(ssh, dsh)
	if err == nil {
		err = c.finishPurge(op)
	}
	if err == nil {
		return failed
	}
	// dst keeps the carried value in cold: memory says so too.
	dsh.mu.Lock()
	if !dsh.pendingLocked(dst) {
		c.placeDurableLocked(dsh, dst, k, nv, alloc, opD.ver, exp, kind) // the version cold holds
	}
	dsh.mu.Unlock()
	return fmt.Errorf("tier: delete the source of a move in cold failed (%w), and so did putting the destination back: both keys now hold the value: %w", cause, err)
}
