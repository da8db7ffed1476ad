package tier

import (
	"fmt"

	"github.com/tiercache/tiercache/backend"
)

// entryState is where a directory entry is in its life.
//
//	        write                 purge (cold may hold a copy)
//	(new) ───────▶ live ─────────────────────────────▶ tomb
//	                │  ▲  write (the key is set again)    │
//	                │  └──────────────────────────────────┤
//	                │ purge (no cold copy), trim           │ its cold delete completed
//	                ▼                                      ▼
//	              gone ◀──────────────────────────────────┘
type entryState uint8

const (
	// stateLive: the key exists (unless expired at exp); copies of
	// version ver may be in any tier.
	stateLive entryState = iota
	// stateTomb: the key is deleted. The entry stays, at the delete's
	// version, until the cold delete queued for it completed, so that an
	// old cold copy is never adopted meanwhile (T4).
	stateTomb
	// stateGone: the entry left the map and is never put back. A hot copy
	// points at its entry, so a hot hit checks it under the shard lock
	// without looking the key up again.
	stateGone
)

func (s entryState) String() string {
	switch s {
	case stateLive:
		return "live"
	case stateTomb:
		return "tomb"
	case stateGone:
		return "gone"
	}
	return fmt.Sprintf("entryState(%d)", uint8(s))
}

// coldState is what cold may hold of a live key.
type coldState uint8

const (
	// coldNone: no copy of the key is in cold or on its way there (or a
	// cold delete of the old one is queued, which the flusher runs before
	// any later write of the key, F3): an overwrite or delete needs no
	// cold delete.
	coldNone coldState = iota
	// coldMaybe: some copy may be in cold or on its way there (a write
	// queued, a warm copy warm may evict to cold, a store of an earlier
	// run), so an overwrite or delete must queue a cold delete first (T3).
	coldMaybe
	// coldHolds: cold holds version ver durably (its write completed, or
	// it was adopted from cold). Implies coldMaybe's duty.
	coldHolds
)

func (s coldState) String() string {
	switch s {
	case coldNone:
		return "none"
	case coldMaybe:
		return "maybe"
	case coldHolds:
		return "holds"
	}
	return fmt.Sprintf("coldState(%d)", uint8(s))
}

// The transitions. Each is called with the key's shard lock held for
// writing.

// write makes e live at a new version: a Set, or an adoption. It reports
// whether e was not live before (the shard's live count grows). What cold
// holds is the caller's to settle first (invalidateLocked).
func (e *entry) write(ver uint64, exp, size int64, kind Kind) (revived bool) {
	revived = e.state != stateLive || e.ver == 0
	e.ver, e.exp, e.state, e.expMoved, e.kind = ver, exp, stateLive, false, kind
	e.setValueSize(size)
	return revived
}

// tombstone marks a live entry deleted at version tomb; its cold delete is
// queued (so cold is none again, invalidateLocked) and its DRAM record
// released (purgeLocked).
func (e *entry) tombstone(tomb uint64) {
	e.state, e.ver, e.expMoved = stateTomb, tomb, false
}

// leave marks an entry that left the map (its DRAM record released).
func (e *entry) leave() {
	e.state = stateGone
}

// coldMayHold records that a copy may now reach cold.
func (e *entry) coldMayHold() {
	if e.cold == coldNone {
		e.cold = coldMaybe
	}
}

// coldWritten records that cold acknowledged version ver written with
// expiry exp: if ver is still the entry's, cold holds it, and if exp is
// still its expiry the copy carries the right one (T17).
func (e *entry) coldWritten(ver uint64, exp int64) {
	if e.state != stateLive || e.ver != ver {
		return
	}
	e.cold = coldHolds
	if exp == e.exp {
		e.expMoved = false
	}
}

// coldForgotten records that a cold delete of whatever cold held is queued.
func (e *entry) coldForgotten() { e.cold = coldNone }

// retime changes a live entry's expiry; a cold copy keeps the one it was
// written with until it is rewritten (T17). The caller files it again in
// the expiry index (shard.fileExpiry).
func (e *entry) retime(exp int64) { e.exp, e.expMoved = exp, true }

// live reports whether the key exists at now.
func (e *entry) live(now int64) bool {
	return e.state == stateLive && !backend.Expired(e.exp, now)
}

// coldHas reports whether cold holds version ver of the key.
func (e *entry) coldHas(ver uint64) bool {
	return e.state == stateLive && e.cold == coldHolds && e.ver == ver
}

// check reports the first lifecycle invariant e breaks as an entry of the
// map under key (the shard lock held): L1-L5 in doc.go.
func (e *entry) check(key string) error {
	switch {
	case e.state != stateLive && e.state != stateTomb:
		return fmt.Errorf("L1: entry of %q in the map is %v", key, e.state)
	case e.ver == 0:
		return fmt.Errorf("L2: entry of %q has version 0", key)
	case e.state == stateTomb && (e.cold != coldNone || e.loc != 0 || e.expMoved):
		return fmt.Errorf("L3: tombstone of %q: cold %v, DRAM record %v, expMoved %v", key, e.cold, e.loc != 0, e.expMoved)
	case e.cold > coldHolds:
		return fmt.Errorf("L4: entry of %q: cold %v", key, e.cold)
	case e.key != key:
		return fmt.Errorf("L5: entry of %q names the key %q", key, e.key)
	case e.loc == 0 && (e.flushing || e.where != memNone || e.recSize != 0):
		return fmt.Errorf("L5: entry of %q has no DRAM record but flushing %v, where %d, %d bytes", key, e.flushing, e.where, e.recSize)
	case e.loc != 0 && e.where == memLive && (e.flushing || e.recSize != 0):
		return fmt.Errorf("L5: entry of %q has a live structure but flushing %v, a record of %d bytes", key, e.flushing, e.recSize)
	case e.loc != 0 && e.where != memLive && (e.where != memHot && e.where != memWarm || int64(e.recSize) != e.valueSize()):
		return fmt.Errorf("L5: entry of %q: a record of %d bytes in log %d for a value of %d", key, e.recSize, e.where, e.valueSize())
	}
	return nil
}
