package nvmekv

// MayHold reports whether the namespace may hold key's record, when it can
// tell from memory (the emulated namespace's index: a tag or extent key
// lookup, no device I/O): false means a Get of key finds nothing. A
// namespace that cannot tell (a KV SSD) answers true.
func (kv *KV) MayHold(key []byte) bool {
	m, ok := kv.ns.(interface{ MayHold(k [16]byte) bool })
	if !ok {
		return true
	}
	h := kv.opts.Hash(key)
	return m.MayHold(h)
}

// ValueLenHint is the length of key's value as the namespace's index
// knows it, for GetSized (K7: a Get told the size takes one round trip):
// the inline record's value less the header and key, possibly a few
// bytes more. ok is false when the namespace cannot tell (a KV SSD) or
// holds no record of key; found then says whether a Get may still find
// it (true for a namespace that cannot tell).
func (kv *KV) ValueLenHint(key []byte) (n int, ok, found bool) {
	v, isIndexed := kv.ns.(interface {
		ValueLen(k [16]byte, klen int) (int, bool)
	})
	if !isIndexed {
		return 0, false, true
	}
	h := kv.opts.Hash(key)
	dl, ok := v.ValueLen(h, len(h))
	if !ok {
		return 0, false, false
	}
	return max(dl-HeaderBytes-len(key), 0), true, true
}
