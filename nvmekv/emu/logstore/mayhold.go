package logstore

// MayHoldLocked reports whether the index may hold device key k, from
// memory alone (no header is read): false means a Retrieve, Exist or
// Delete of k finds nothing; true means an entry of k's tag exists (k's
// own, or with probability about probe length/2^32 another key's, E8) or
// k is an extent record's key. The caller holds the read lock.
func (lg *Log) MayHoldLocked(k *[16]byte) bool {
	if _, ok := lg.idx.ext.get(k); ok {
		return true
	}
	c := lg.idx.tags.cands(tagOf(k))
	t, _ := c.next()
	return t != nil
}

// RecordHeaderBytes is an inline record's header (layout.go): its Loc's
// Size less this is its value's length, rounded up to 16 bytes.
const RecordHeaderBytes = recHdrBytes
