package nvmekv

// MayHold reports whether the namespace may hold key's record, when it can
// tell from memory (the emulated namespace's index: a tag or extent key
// lookup, no device I/O): false means a Get of key finds nothing. A
// namespace that cannot tell (a KV SSD) answers true.
func (kv *KV) MayHold(key []byte) bool {
	m, ok := kv.ns.(interface{ MayHold(k *[16]byte) bool })
	if !ok {
		return true
	}
	h := kv.opts.Hash(key)
	return m.MayHold(&h)
}
