package emu

// FullKeyItems is the number of live records whose device key is 16
// bytes long, in O(1) (logstore E31): nvmekv.KV's record headers, one a
// user key (nvmekv K16). It makes the namespace an nvmekv.KeyCounter.
func (e *Namespace) FullKeyItems() int64 { return int64(e.lg.FullKeyItems()) }
