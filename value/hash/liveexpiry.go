package hash

import (
	"encoding/binary"

	"github.com/tiercache/tiercache/value"
)

// A Hash's field expiries (Redis 7.4's HEXPIRE): a side table of the
// fields that have one, field → unix ms, with the earliest. A field's
// expiry goes with the field (Put drops it, PutKeepTTL keeps it, Delete
// and Purge remove it). The Hash keeps expired fields until a write
// purges them (Purge); the readers of a live hash skip them (GetLive,
// LenLive, EachLive), as Live does for a record.

// ttl is the expiry side of a Hash.
type ttl struct {
	exp      *value.Table // field → expiry, 8 bytes big-endian; nil until a field has one
	expBytes int          // the uvarint bytes of the expiries in exp
	min      int64        // the earliest expiry in exp, when !stale
	stale    bool         // min must be looked for again (its field lost it)
}

// ttlCounts is what a record's size takes from the expiries: how many
// fields have one and their uvarint bytes.
type ttlCounts struct{ n, bytes int }

func (t *ttl) counts() ttlCounts {
	if t.exp == nil {
		return ttlCounts{}
	}
	return ttlCounts{t.exp.Len(), t.expBytes}
}

// drop takes a field's expiry exp (0: none) out of the counts.
func (c *ttlCounts) drop(exp int64) {
	if exp != 0 {
		c.n--
		c.bytes -= uvarintLen(uint64(exp))
	}
}

// recordSize is the size of the record of n fields whose first-version
// record is base bytes: the second version adds each field's expiry (a
// zero byte for none).
func (c ttlCounts) recordSize(n, base int) int {
	if c.n == 0 {
		return base
	}
	return base + n - c.n + c.bytes
}

func (t *ttl) recordSize(n, base int) int { return t.counts().recordSize(n, base) }

func (t *ttl) heapBytes() int64 {
	if t.exp == nil {
		return 0
	}
	return t.exp.HeapBytes()
}

// Expiry is field's expiry, 0 for none (or no such field).
func (t *ttl) Expiry(field []byte) int64 {
	if t.exp == nil || t.exp.Len() == 0 {
		return 0
	}
	b, ok := t.exp.Get(field)
	if !ok {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// setExp gives field the expiry at (not 0).
func (t *ttl) setExp(field []byte, at int64) {
	t.dropExp(field)
	if t.exp == nil {
		t.exp = &value.Table{}
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at))
	t.exp.Put(field, b[:])
	t.expBytes += uvarintLen(uint64(at))
	if t.exp.Len() == 1 || at < t.min { // min is never later than the earliest
		t.min, t.stale = at, false
	}
}

// dropExp removes field's expiry, if it has one.
func (t *ttl) dropExp(field []byte) {
	old := t.Expiry(field)
	if old == 0 {
		return
	}
	t.exp.Delete(field)
	t.expBytes -= uvarintLen(uint64(old))
	if old == t.min {
		t.stale = true
	}
	if t.exp.Len() == 0 {
		t.exp, t.expBytes, t.min, t.stale = nil, 0, 0, false // its table goes: a hash without expiries is as before
	}
}

// MinExpiry is the earliest expiry of a field, 0 when none has one.
func (t *ttl) MinExpiry() int64 {
	if t.exp == nil {
		return 0
	}
	if t.stale {
		t.min, t.stale = 0, false
		t.exp.Each(func(_, b []byte) bool {
			if e := int64(binary.BigEndian.Uint64(b)); t.min == 0 || e < t.min {
				t.min = e
			}
			return true
		})
	}
	return t.min
}

// ExpiryBound is MinExpiry without looking again (a reader under a read
// lock must not change the Hash): no later than the earliest expiry, 0
// when no field has one.
func (t *ttl) ExpiryBound() int64 {
	if t.exp == nil {
		return 0
	}
	return t.min // stale: an expiry dropped, the earliest is no earlier than min
}

// Expired is how many fields are expired at now.
func (t *ttl) Expired(now int64) int {
	if t.exp == nil || t.ExpiryBound() > now {
		return 0
	}
	n := 0
	t.exp.Each(func(_, b []byte) bool {
		if Expired(int64(binary.BigEndian.Uint64(b)), now) {
			n++
		}
		return true
	})
	return n
}

// SetExpiry gives field (present) the expiry at, or none with 0.
func (h *Hash) SetExpiry(field []byte, at int64) {
	if at == 0 {
		h.dropExp(field)
		return
	}
	h.setExp(field, at)
}

// Purge removes the fields expired at now and says how many there were.
func (h *Hash) Purge(now int64) int {
	if h.Expired(now) == 0 {
		return 0
	}
	var names [][]byte
	h.exp.Each(func(f, b []byte) bool {
		if Expired(int64(binary.BigEndian.Uint64(b)), now) {
			names = append(names, append([]byte(nil), f...))
		}
		return true
	})
	for _, f := range names {
		h.Delete(f)
	}
	return len(names)
}

// GetLive is Get of a field not expired at now.
func (h *Hash) GetLive(field []byte, now int64) ([]byte, bool) {
	v, ok := h.Get(field)
	if ok && Expired(h.Expiry(field), now) {
		return nil, false
	}
	return v, ok
}

// LenLive is the number of fields not expired at now.
func (h *Hash) LenLive(now int64) int { return h.Len() - h.Expired(now) }

// EachLive calls f with every field not expired at now, its value and its
// expiry (0: none), in h's order, until f returns false.
func (h *Hash) EachLive(now int64, f func(field, value []byte, exp int64) bool) {
	h.Each(func(name, v []byte) bool {
		exp := h.Expiry(name)
		if Expired(exp, now) {
			return true
		}
		return f(name, v, exp)
	})
}

// LiveFields appends h's fields not expired at now, with their expiries,
// to dst in h's order (aliasing h).
func (h *Hash) LiveFields(dst []Field, now int64) []Field {
	h.EachLive(now, func(f, v []byte, exp int64) bool {
		dst = append(dst, Field{Name: f, Value: v, Expiry: exp})
		return true
	})
	return dst
}

// CheckPuts checks that h with pairs (field, value, ...) set in order (by
// Put, or PutKeepTTL with keepTTL) stays within lim after each pair,
// before any is set: the error names the first count or size past it, as
// setting them one by one would meet it. seen is a scratch map (cleared).
func (h *Hash) CheckPuts(pairs [][]byte, keepTTL bool, lim Limits, seen map[string]int) error {
	if len(pairs) == 2 && !keepTTL {
		return lim.Check(h.SizeAfter(pairs[0], pairs[1]))
	}
	n, base, t := h.Len(), h.baseSize(), h.counts()
	defer clear(seen)
	for i := 0; i+1 < len(pairs); i += 2 {
		f, v := pairs[i], pairs[i+1]
		base += value.EntrySize(f, v)
		if j, ok := seen[string(f)]; ok {
			base -= value.EntrySize(f, pairs[j+1])
		} else if old, ok := h.Get(f); ok {
			base -= value.EntrySize(f, old)
			if !keepTTL {
				t.drop(h.Expiry(f))
			}
		} else {
			base += uvarintLen(uint64(n+1)) - uvarintLen(uint64(n))
			n++
		}
		seen[string(f)] = i
		if err := lim.Check(n, t.recordSize(n, base)); err != nil {
			return err
		}
	}
	return nil
}

// Clone is a copy of h sharing nothing with it.
func (h *Hash) Clone() *Hash {
	c, _ := LoadHash(h.AppendRecord(nil)) // its own record: it decodes
	return c
}

// Become makes h what o is, taking over o's memory (o is not used again).
func (h *Hash) Become(o *Hash) { *h = *o }

// Expire sets the expiry at of the fields named on h, which holds no
// expired field, as SetExpiry does on decoded fields (Redis 7.4's
// hexpireGenericCommand: the condition first, then a time at or before
// now deletes the field), appending each name's code to codes.
func (h *Hash) Expire(names [][]byte, at int64, cond Cond, now int64, codes []int64) []int64 {
	for _, name := range names {
		if _, ok := h.Get(name); !ok {
			codes = append(codes, CodeNoField)
			continue
		}
		switch {
		case !condMet(h.Expiry(name), at, cond):
			codes = append(codes, CodeNotMet)
		case at <= now:
			h.Delete(name)
			codes = append(codes, CodeDeleted)
		default:
			h.setExp(name, at)
			codes = append(codes, CodeSet)
		}
	}
	return codes
}

// PersistFields removes the expiry of the fields named, as Persist does,
// appending each one's code (CodeNoField, CodeNoTTL or CodeSet) to codes.
func (h *Hash) PersistFields(names [][]byte, codes []int64) []int64 {
	for _, name := range names {
		_, ok := h.Get(name)
		switch {
		case !ok:
			codes = append(codes, CodeNoField)
		case h.Expiry(name) == 0:
			codes = append(codes, CodeNoTTL)
		default:
			h.dropExp(name)
			codes = append(codes, CodeSet)
		}
	}
	return codes
}
