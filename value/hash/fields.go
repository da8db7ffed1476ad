package hash

import (
	"hash/fnv"
	"slices"
)

// Find is the index of the field named name in fields, -1 if absent.
func Find(fields []Field, name []byte) int {
	for i, f := range fields {
		if string(f.Name) == string(name) && f.Expiry >= 0 { // not marked deleted (SetExpiry)
			return i
		}
	}
	return -1
}

// Set sets pairs (name, value, name, value...) in fields, a new field at
// the end: the new field list and how many fields are new. A field set
// again loses its expiry, as HSET's does.
func Set(fields []Field, pairs [][]byte) ([]Field, int) {
	added := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		if j := Find(fields, pairs[i]); j >= 0 {
			fields[j].Value, fields[j].Expiry = pairs[i+1], 0
			continue
		}
		fields = append(fields, Field{Name: pairs[i], Value: pairs[i+1]})
		added++
	}
	return fields, added
}

// Delete removes the fields named in names: the new field list and how
// many were there.
func Delete(fields []Field, names [][]byte) ([]Field, int) {
	removed := 0
	for _, name := range names {
		if j := Find(fields, name); j >= 0 {
			fields = append(fields[:j], fields[j+1:]...)
			removed++
		}
	}
	return fields, removed
}

// ScanWhole is the field count up to which HSCAN answers a whole hash in
// one call with cursor 0, as Redis does for a listpack hash (its
// hash-max-listpack-entries default, 128).
const ScanWhole = 128

// ScanStep is one step of HSCAN over a hash larger than a call returns:
// the fields whose hash (a 64-bit FNV-1a of the name) is at least cursor,
// in hash order, count of them (more when the next ones share the last
// one's hash), and the cursor after them (0 when none is left). A field
// present for the whole scan comes out exactly once whatever is added or
// removed meanwhile (VH5). The fields it returns reuse fields' array.
func ScanStep(fields []Field, cursor uint64, count int) ([]Field, uint64) {
	type hf struct {
		h uint64
		f Field
	}
	all := make([]hf, 0, len(fields))
	for _, f := range fields {
		if h := nameHash(f.Name); h >= cursor {
			all = append(all, hf{h, f})
		}
	}
	slices.SortFunc(all, func(a, b hf) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	n := min(count, len(all))
	for n < len(all) && n > 0 && all[n].h == all[n-1].h {
		n++
	}
	out := fields[:0]
	for _, x := range all[:n] {
		out = append(out, x.f)
	}
	if n == len(all) {
		return out, 0
	}
	return out, all[n].h
}

// nameHash orders a large hash's fields for ScanStep's cursor.
func nameHash(f []byte) uint64 {
	h := fnv.New64a()
	h.Write(f)
	return h.Sum64()
}
