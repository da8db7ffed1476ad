package emu

// MayHold reports whether the namespace may hold device key k, from the
// index in memory alone (logstore MayHoldLocked): false means a Retrieve
// of k answers Key Does Not Exist, so a caller may skip the command. A
// closed namespace answers true (the command reports it).
func (e *Namespace) MayHold(k *[16]byte) bool {
	e.lg.RLock()
	defer e.lg.RUnlock()
	return e.lg.ClosedLocked() || e.lg.MayHoldLocked(k)
}
