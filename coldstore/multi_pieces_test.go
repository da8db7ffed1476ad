package coldstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
)

// cutEvery lays a value of flags 1 out in pieces of 3 KiB, each piece's
// meta its index; other values are stored whole.
func cutEvery(flags uint32, v []byte) ([]byte, []int, []uint32) {
	if flags != 1 {
		return nil, nil, nil
	}
	var ends []int
	var metas []uint32
	for end := 3 << 10; ; end += 3 << 10 {
		metas = append(metas, uint32(len(ends)))
		if end >= len(v) {
			return v, append(ends, len(v)), metas
		}
		ends = append(ends, end)
	}
}

// TestMultiReadsPieces is CS10: with tenant namespaces, GetPieces reads
// the pieces of a value of a tenant's own namespace, of a tenant sharing
// the default one and of the default tenant from the namespace its key's
// prefix selects, reading a few blocks of that namespace and none of
// another, counted as a read of its tenant; a miss is not found, and a
// value stored whole comes whole with no table.
func TestMultiReadsPieces(t *testing.T) {
	ctx := context.Background()
	c := multiConfig(t.TempDir(), TenantSpace{Name: "a", Bytes: 4 << 20})
	c.Cut = cutEvery
	m := openMultiT(t, c)
	defer m.Close()
	values := map[string][]byte{}
	var items []*flusher.Item
	for i, k := range []string{"a:big", "c:big", "big"} {
		v := bytes.Repeat([]byte(k+"-"), 200<<10/len(k))
		for j := 0; j+8 <= len(v); j += 3 << 10 {
			copy(v[j:], fmt.Sprintf("%08d", j/(3<<10)))
		}
		values[k] = v
		items = append(items, &flusher.Item{Key: []byte(k), Value: v, Version: uint64(i + 1), Flags: 1})
	}
	items = append(items, &flusher.Item{Key: []byte("a:small"), Value: []byte("whole"), Version: 9})
	for i := range 3 { // fillers: the values' regions leave the write buffers
		for _, p := range []string{"a:", ""} {
			items = append(items, &flusher.Item{Key: fmt.Appendf(nil, "%sfiller%d", p, i), Value: make([]byte, 300<<10), Version: uint64(10 + i)})
		}
	}
	if err := m.PutMany(ctx, items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Err != nil {
			t.Fatalf("put %s: %v", it.Key, it.Err)
		}
	}
	reads := func() map[string]uint64 {
		out := map[string]uint64{}
		for _, r := range m.Stats().Tenants {
			out[r.Name] = r.Reads
		}
		return out
	}
	for k, tenant := range map[string]string{"a:big": "a", "c:big": "c", "big": "default"} {
		own, other := m.spaceOf("a"), m.spaceOf("default")
		if tenant != "a" {
			own, other = other, own
		}
		ownBefore, otherBefore, readsBefore := own.Stats().BytesRead, other.Stats().BytesRead, reads()
		var table []backend.PieceInfo
		ps, tab, meta, found, err := m.GetPieces(ctx, []byte(k), func(t []backend.PieceInfo) []int {
			table = t
			return []int{len(t) - 1, 7}
		})
		if err != nil || !found || meta.Version == 0 || len(ps) != 2 || len(tab) != len(table) || len(tab) < 60 {
			t.Fatalf("%s: %d pieces of a table of %d, found %v, %v", k, len(ps), len(tab), found, err)
		}
		v := values[k]
		last, seventh := tab[len(tab)-1], tab[7]
		if !bytes.Equal(ps[0], v[last.Off:last.Off+last.Len]) || !bytes.Equal(ps[1], v[seventh.Off:seventh.Off+seventh.Len]) || seventh.Meta != 7 {
			t.Fatalf("%s: the pieces read are not the value's", k)
		}
		read, elsewhere := own.Stats().BytesRead-ownBefore, other.Stats().BytesRead-otherBefore
		if read == 0 || read > 5*4096 || elsewhere != 0 {
			t.Fatalf("%s: read %d bytes of its namespace (of a %d-byte value), %d of another", k, read, len(v), elsewhere)
		}
		if got := reads()[tenant] - readsBefore[tenant]; got != 1 {
			t.Fatalf("%s: %d reads counted to tenant %s", k, got, tenant)
		}
		t.Logf("%s: 2 pieces of %d, %d bytes read", k, len(tab), read)
	}
	if ps, tab, _, found, err := m.GetPieces(ctx, []byte("a:small"), func([]backend.PieceInfo) []int { t.Fatal("choose called"); return nil }); err != nil || !found || tab != nil || len(ps) != 1 || string(ps[0]) != "whole" {
		t.Fatalf("a value stored whole: %q %v %v %v", ps, tab, found, err)
	}
	if _, _, _, found, err := m.GetPieces(ctx, []byte("a:none"), func([]backend.PieceInfo) []int { return nil }); err != nil || found {
		t.Fatalf("a miss: found %v, %v", found, err)
	}
}
