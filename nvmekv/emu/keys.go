package emu

import (
	"context"
	"fmt"
)

// FullKeyItems is the number of live records whose device key is 16
// bytes long, in O(1) (logstore E31): nvmekv.KV's record headers, one a
// user key (nvmekv K16). It makes the namespace an nvmekv.KeyCounter.
func (e *Namespace) FullKeyItems() int64 { return int64(e.lg.FullKeyItems()) }

// ScanTags calls fn for every live record with a klen-byte device key
// whose tag (logstore.TagOf of the key, zero-padded) is in [from, next),
// with its key and at least the first prefix bytes of its value (all of
// it if shorter; valid during the call only), and returns next: about n
// records' worth of tags, logstore.TagSpace when the walk reached the
// end (logstore E32, E33). A record moved or overwritten while the scan
// reads it is read again where it went while its key stays live; no key
// is given twice in one call, nor with another key's bytes. It makes
// the namespace an nvmekv.TagScanner.
func (e *Namespace) ScanTags(ctx context.Context, from uint64, n int, klen int, prefix int, fn func(key [16]byte, value []byte)) (next uint64, err error) {
	next, err = e.lg.ScanTags(ctx, from, n, klen, prefix, fn)
	if err != nil {
		return next, fmt.Errorf("emu: scan tags from %#x: %w", from, err)
	}
	return next, nil
}
