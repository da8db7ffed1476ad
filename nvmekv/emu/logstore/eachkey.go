package logstore

import (
	"fmt"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// eachKeyLocked calls fn with every live key and its Loc: extent keys
// from the index; inline keys, which the index holds only as tags, from
// their records: every region holding a live inline record is walked,
// from its write buffer if it is still in one, else read whole from the
// device into a scratch mapping, and each store record the index points
// at is a live key. It costs a read of every such region (List, and
// writing an older checkpoint format). Locked.
func (lg *Log) eachKeyLocked(fn func(key *[16]byte, l Loc)) error {
	lg.idx.ext.each(func(a, b uint64, l Loc) {
		k := joinKey(a, b)
		fn(&k, l)
	})
	inline := make([]uint32, lg.nReg)
	lg.idx.tags.each(func(_ uint32, l Loc) { inline[l.Region()]++ })
	var scratch []byte
	defer func() { dev.UnmapBuffer(scratch) }()
	for r, n := range inline {
		if n == 0 {
			continue
		}
		img := []byte(nil)
		if b := lg.bufOfLocked(r); b != nil {
			img = b.mem
		} else {
			if scratch == nil {
				m, err := dev.MapBuffer(lg.o.RegionBytes)
				if err != nil {
					return fmt.Errorf("logstore: a buffer to read the keys of %s: %w", lg.o.Path, err)
				}
				scratch = m
			}
			if err := lg.d.ReadAt(scratch, lg.regionOff(r)); err != nil {
				return fmt.Errorf("logstore: read region %d of %s for its keys: %w", r, lg.o.Path, err)
			}
			img = scratch
		}
		walkRegion(img, lg.regs[r].seq, lg.o.RegionBytes, func(off int, rc *rec) {
			if rc.kind != kindStore {
				return
			}
			if l := rc.locIn(r, off); lg.idx.has(&rc.key, l) {
				fn(&rc.key, l)
			}
		})
	}
	return nil
}
