package hash

import (
	"fmt"
	"testing"
)

// TestPiecesCut is VH12: a large record, of either version, is cut into
// pieces whose concatenation decodes to its fields with their expiries;
// each piece's meta counts its fields, says whether the record carries
// expiries and whether the piece holds one; every field is found, with
// its expiry, in the pieces PiecesFor names for it; Expiring names
// exactly the pieces with an expiry; a small record is stored whole.
func TestPiecesCut(t *testing.T) {
	for _, withTTL := range []bool{false, true} {
		fields := make([]Field, 10000)
		want := map[string]Field{}
		for i := range fields {
			fields[i] = Field{Name: fmt.Appendf(nil, "field:%d", i), Value: fmt.Appendf(nil, "value-%d", i)}
			if withTTL && i%997 == 3 {
				fields[i].Expiry = int64(1_700_000_000_000 + i)
			}
			want[string(fields[i].Name)] = fields[i]
		}
		rec := Encode(nil, fields)
		if HasTTL(rec) != withTTL {
			t.Fatalf("ttl %v: record of version %d", withTTL, rec[0])
		}
		out, ends, metas := Cut(rec)
		if out == nil || len(ends) < 2 || len(ends) != len(metas) || ends[len(ends)-1] != len(out) {
			t.Fatalf("ttl %v: cut into %d ends, %d metas of %d bytes", withTTL, len(ends), len(metas), len(out))
		}
		got, err := Decode(nil, out)
		if err != nil || len(got) != len(fields) {
			t.Fatalf("ttl %v: the pieces decode to %d fields: %v", withTTL, len(got), err)
		}
		for _, f := range got {
			if w := want[string(f.Name)]; string(w.Value) != string(f.Value) || w.Expiry != f.Expiry {
				t.Fatalf("ttl %v: %s = %q/%d, want %q/%d", withTTL, f.Name, f.Value, f.Expiry, w.Value, w.Expiry)
			}
		}
		if Total(metas) != len(fields) {
			t.Fatalf("ttl %v: Total %d, want %d", withTTL, Total(metas), len(fields))
		}
		start := 0
		var expiring []int
		pieceOf := map[string]int{}
		for i, end := range ends {
			n, hasExp := 0, false
			if err := PieceEach(out[start:end], i == 0, metas[i], func(name, v []byte, exp int64) bool {
				n++
				hasExp = hasExp || exp != 0
				pieceOf[string(name)] = i
				if w := want[string(name)]; string(w.Value) != string(v) || w.Expiry != exp {
					t.Fatalf("ttl %v: piece %d: %s = %q/%d, want %q/%d", withTTL, i, name, v, exp, w.Value, w.Expiry)
				}
				return true
			}); err != nil {
				t.Fatalf("ttl %v: piece %d: %v", withTTL, i, err)
			}
			if n != int(metas[i]&metaCount) || (metas[i]&metaTTL != 0) != withTTL {
				t.Fatalf("ttl %v: piece %d has %d fields, meta %#x", withTTL, i, n, metas[i])
			}
			if hasExp {
				expiring = append(expiring, i)
			}
			start = end
		}
		if fmt.Sprint(expiring) != fmt.Sprint(Expiring(metas)) || withTTL != (len(expiring) > 0) {
			t.Fatalf("ttl %v: pieces with an expiry %v, Expiring says %v", withTTL, expiring, Expiring(metas))
		}
		for name, i := range pieceOf {
			found := false
			for _, j := range PiecesFor(metas, [][]byte{[]byte(name)}) {
				found = found || j == i
			}
			if !found {
				t.Fatalf("ttl %v: %s is in piece %d, PiecesFor says %v", withTTL, name, i, PiecesFor(metas, [][]byte{[]byte(name)}))
			}
		}
		if out, _, _ := Cut(Encode(nil, fields[:100])); out != nil {
			t.Fatalf("ttl %v: a small record was cut", withTTL)
		}
	}
}
