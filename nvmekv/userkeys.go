package nvmekv

import "reflect"

// Counting and listing the user keys a KV holds, for a namespace that can
// tell record headers from chunks: a header's device key is 16 bytes and
// a chunk's 15 (K16), so a namespace that counts its 16-byte device keys
// counts user keys.

// KeyCounter is a namespace that counts its live 16-byte device keys in
// O(1): the emulated namespace (nvmekv/emu, logstore E31). A KV SSD is
// not one.
type KeyCounter interface {
	FullKeyItems() int64
}

// defaultHashed reports whether h is DefaultHasher: only then is a
// namespace's device key of a user key the one the tier (and UserKeys,
// ScanUserKeys) compute.
func defaultHashed(h Hasher) bool {
	return h != nil && reflect.ValueOf(h).Pointer() == reflect.ValueOf(DefaultHasher).Pointer()
}

// UserKeys is the number of user keys kv's namespace holds, in O(1): its
// live 16-byte device keys (K16), when the namespace counts them
// (KeyCounter) and kv's Hasher is DefaultHasher; ok is false otherwise
// (a KV SSD, a test hasher). Expired records count until they are
// deleted or reclaimed; a chunked record written before K16 counts as
// one key for its header and one for each of its chunks, whose device
// keys are 16 bytes too, until a Put or Delete of its key replaces it.
func (kv *KV) UserKeys() (n int64, ok bool) {
	c, isCounter := kv.ns.(KeyCounter)
	if !isCounter || !kv.defHash {
		return 0, false
	}
	return c.FullKeyItems(), true
}
