package emu

import "github.com/tiercache/tiercache/nvmekv/emu/logstore"

// MayHold reports whether the namespace may hold device key k, from the
// index in memory alone (logstore MayHoldLocked): false means a Retrieve
// of k answers Key Does Not Exist, so a caller may skip the command. A
// closed namespace answers true (the command reports it).
func (e *Namespace) MayHold(k [16]byte) bool { // by value: through an interface a pointer would escape
	e.lg.RLock()
	defer e.lg.RUnlock()
	return e.lg.ClosedLocked() || e.lg.MayHoldLocked(&k)
}

// ValueLen is the length of the value stored under device key k (klen
// bytes), from the index, or at most 15 bytes more (an inline record's
// size is kept in 16-byte units); ok is false when the index has no entry
// of k. It reads a record header only when k's tag has several entries
// (logstore CandidateLocked), so a Retrieve can be sized for the whole
// record without a round trip to learn its size.
func (e *Namespace) ValueLen(k [16]byte, klen int) (n int, ok bool) {
	e.lg.RLock()
	defer e.lg.RUnlock()
	if e.lg.ClosedLocked() {
		return 0, false
	}
	l, ok, err := e.lg.CandidateLocked(&k, klen)
	if err != nil || !ok {
		return 0, false
	}
	if l.Ext() {
		return l.VLen(), true
	}
	return l.Size() - logstore.RecordHeaderBytes, true
}
