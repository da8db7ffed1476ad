package server

import (
	"bytes"
	"errors"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// SORT's BY and GET patterns name, for each element, a key (and maybe a
// hash field) to read, as Redis 7.0's lookupKeyByPattern does (sort.c).

// patternKey is what pattern names for element sub: the key its first
// '*' gives with sub put in its place, and, for a pattern whose "->"
// after that '*' is followed by a field name, the hash field of that key;
// self for the pattern "#" (the element itself); none for a pattern
// without '*', which reads nothing. Like Redis, '*' and "->" are searched
// in the pattern's C string (up to a NUL), the field runs to the
// pattern's end.
func patternKey(dst, pat, sub []byte) (key, field []byte, self, none bool) {
	if isHashPattern(pat) {
		return dst, nil, true, false
	}
	cs := cString(pat)
	p := bytes.IndexByte(cs, '*')
	if p < 0 {
		return dst, nil, false, true
	}
	post := pat[p+1:]
	if f := bytes.Index(cs[p+1:], []byte("->")); f >= 0 && p+1+f+2 < len(pat) && pat[p+1+f+2] != 0 {
		field = pat[p+1+f+2:]
		post = pat[p+1 : p+1+f]
	}
	dst = append(dst, pat[:p]...)
	dst = append(dst, sub...)
	return append(dst, post...), field, false, false
}

// sortLookup reads what pattern names for element sub: a string key's
// value, or a hash field's, a copy; nil when there is none (the key is
// absent or of another kind, the field absent or expired at now, unix
// nanoseconds). An error is the cache's.
func (c *conn) sortLookup(pat, sub []byte, now int64) ([]byte, error) {
	key, field, self, none := patternKey(c.sortKey[:0], pat, sub)
	c.sortKey = key[:0]
	switch {
	case self:
		return sub, nil
	case none, len(key) == 0: // the cache holds no empty key
		return nil, nil
	case field == nil:
		v, kind, _, exists, _, err := c.s.cache.ViewAny(nil, key)
		if err != nil || !exists || kind != tier.KindString {
			return nil, err
		}
		if v == nil {
			v = []byte{}
		}
		return v, nil
	}
	var val []byte
	ms := now / int64(time.Millisecond)
	_, err := c.s.cache.ReadAt(key, hashes, now, func(v tier.Live) error {
		if got, found := hashOf(v).GetLive(field, ms); found {
			val = append([]byte{}, got...)
		}
		return nil
	})
	if errors.Is(err, tier.ErrWrongKind) {
		return nil, nil
	}
	return val, err
}
