package tier

import "github.com/tiercache/tiercache/backend"

// MemoryUsage is the DRAM key holds now (MEMORY USAGE), from the costs
// measured for each part: its directory entry (DirEntryBytes, a key
// longer than 16 bytes adding its excess rounded up to 16: T19's
// TestDirectoryCostCoversHeap) and, with an expiry, its slot in the
// expiry index (ExpiryIndexKeyBytes), its value's record where a DRAM log holds
// it (hot or warm: the record is the value's bytes alone, dram A3), or
// the Go heap of its live structure (Live.HeapBytes, what hot is charged
// for it, measured within 2% by the value packages), and its entry in the
// cold store's index when cold holds a copy and keeps that index in DRAM
// (ColdIndexBytes, the emulated namespace's bound). A copy only cold or
// the remote tier holds costs the directory and the index alone; a copy
// on its way to cold (the flusher's, for the moment of its write) is not
// counted. exists is false for a key absent or expired.
func (c *Cache) MemoryUsage(key []byte) (n int64, exists bool) {
	exists = c.withLive(key, func(e *entry, _ int64) {
		n = DirEntryBytes
		if len(key) > 16 {
			n += int64(len(key)-16+15) &^ 15
		}
		if e.indexed() {
			n += ExpiryIndexKeyBytes
		}
		switch {
		case e.loc == 0:
		case e.where == memLive:
			n += c.liveSlotOf(e).bytes
		case e.where == memHot || e.where == memWarm:
			n += int64(e.recSize)
		}
		if e.hdr || e.coldHas(e.ver) {
			if ks, ok := c.cold.(backend.Keyspace); ok {
				if _, counts := ks.UserKeys(); counts { // an index in DRAM
					n += ColdIndexBytes
				}
			}
		}
	})
	return n, exists
}
