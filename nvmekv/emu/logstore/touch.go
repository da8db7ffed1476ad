package logstore

import "github.com/tiercache/tiercache/nvmekv"

// TouchLocked reads, for the key of each Store, Retrieve, Delete and
// Exist of ops, the tag index slot a lookup of the key starts at (its
// tag's home slot, E35), and changes nothing. A batch that is about to
// look up or store many keys (a flusher's PutMany) calls it first, so
// that the cache misses of its lookups overlap here, as independent
// loads the CPU runs side by side, instead of coming one at a time in
// the commands: each is a miss on a slot of an index larger than the
// CPU's caches, and a new key's Store probes its tag (SlotLocked) and
// then inserts at that slot. A hint only: the commands that follow find
// what they would have found without it. The caller holds the lock (read
// or write).
func (lg *Log) TouchLocked(ops []*nvmekv.Op) {
	x := lg.idx.tags
	var sum uint64
	for _, op := range ops {
		switch op.Code {
		case nvmekv.OpStore, nvmekv.OpRetrieve, nvmekv.OpDelete, nvmekv.OpExist:
		default:
			continue
		}
		if len(op.Key) == 0 || len(op.Key) > 16 {
			continue
		}
		var key [16]byte
		copy(key[:], op.Key)
		sum += x.touchHome(tagOf(&key))
	}
	if sum == 1<<63 { // almost never: the loads are used, and readers under the read lock do not all write one cache line
		lg.touched.Store(sum)
	}
}

// touchHome reads a byte of tag's home slot (TouchLocked), 0 for a
// segment whose pages are not resident yet (a read would fault one in).
func (x *tagIndex) touchHome(tag uint32) uint64 {
	s := x.seg(tag)
	if s.cold || s.n == 0 {
		return 0
	}
	return uint64(s.slots[s.home(tag)][0])
}
