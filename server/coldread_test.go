package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/list"
)

// TestColdAggregateReadsItsPieces is S45: a 10,000-field hash and a
// 100,000-element list that only the cold tier holds (written in pieces,
// ColdCut) answer HGET of one field, HMGET, HEXISTS, HLEN, LRANGE 0 9,
// LRANGE -10 -1, LINDEX and LLEN reading a few 4 KiB blocks of the
// emulated store, where the whole records take hundreds; HGETALL and a
// whole LRANGE read the table and then every piece in one submission;
// every answer is the one the whole value gives.
func TestColdAggregateReadsItsPieces(t *testing.T) {
	tc, store, path := openPiecesServer(t, nil)
	fields, items := bigAggregates()
	putColdAlone(t, tc, map[string][]byte{"bighash": hash.Encode(nil, fields), "biglist": list.Encode(nil, items)})
	read := emulatedRead(store)
	r := dialExact(t, path)
	readsFewBlocks(t, r, read, []pieceRead{
		{[]string{"HGET", "bighash", "field:4711"}, "$10\r\nvalue-4711\r\n", 5},
		{[]string{"HGET", "bighash", "nofield"}, "$-1\r\n", 5},
		{[]string{"HMGET", "bighash", "field:1", "field:9999"}, "*2\r\n$7\r\nvalue-1\r\n$10\r\nvalue-9999\r\n", 8},
		{[]string{"HEXISTS", "bighash", "field:77"}, ":1\r\n", 5},
		{[]string{"HSTRLEN", "bighash", "field:77"}, ":8\r\n", 5},
		{[]string{"HLEN", "bighash"}, ":10000\r\n", 3},
		{[]string{"LRANGE", "biglist", "0", "9"}, lrangeReply(items[:10]), 6},
		{[]string{"LRANGE", "biglist", "-10", "-1"}, lrangeReply(items[len(items)-10:]), 6},
		{[]string{"LRANGE", "biglist", "50000", "50002"}, lrangeReply(items[50000:50003]), 6},
		{[]string{"LINDEX", "biglist", "-3"}, "$16\r\n" + string(items[len(items)-3]) + "\r\n", 6},
		{[]string{"LLEN", "biglist"}, ":100000\r\n", 4},
	})
	before := read()
	checkHGetAll(t, r, "bighash", fields)
	t.Logf("HGETALL: %d bytes", read()-before)
	before = read()
	if got := r.do("LRANGE", "biglist", "1000", "2999"); got != lrangeReply(items[1000:3000]) {
		t.Fatalf("LRANGE 1000 2999 of the cold list differs (%d bytes)", len(got))
	}
	t.Logf("LRANGE 1000 2999: %d bytes", read()-before)
}

// bigAggregates are the fields of a 10,000-field hash and the elements of
// a 100,000-element list.
func bigAggregates() ([]hash.Field, [][]byte) {
	fields := make([]hash.Field, 10000)
	for i := range fields {
		fields[i] = hash.Field{Name: []byte(fmt.Sprint("field:", i)), Value: []byte(fmt.Sprint("value-", i))}
	}
	items := make([][]byte, 100000)
	for i := range items {
		items[i] = []byte(fmt.Sprintf("element-%08d", i))
	}
	return fields, items
}

// openPiecesServer is a server on a cache whose large values go straight
// to an emulated cold store that cuts aggregates into pieces (ColdCut),
// never promoted back; edit may change its configuration.
func openPiecesServer(t *testing.T, edit func(*tier.Options, *coldstore.Config)) (*tier.Cache, backend.Store, string) {
	var store backend.Store
	tc := openColdCache(t, func(o *tier.Options, cc *coldstore.Config) {
		o.HotMaxValue = 1 << 10 // the records go straight to cold
		o.Promotion.Disabled = true
		cc.Capacity, cc.RegionBytes, cc.Cut = 64<<20, 256<<10, ColdCut
		if edit != nil {
			edit(o, cc)
		}
		o.OpenCold = func(p backend.Params) (backend.Store, error) {
			s, err := coldstore.Open(*cc, p)
			store = s
			return s, err
		}
	})
	_, path := startServerWith(t, tc, nil)
	return tc, store, path
}

// emulatedRead is the bytes store, a single emulated namespace, read from
// its file.
func emulatedRead(store backend.Store) func() uint64 {
	ns := store.(*coldstore.Store).KV().Namespace().(interface{ Stats() emu.Stats })
	return func() uint64 { return ns.Stats().ReadBytes }
}

// putColdAlone stores each record (a hash's or a list's, by its key's
// name) so that only the cold tier holds it, then writes fillers of two
// regions each, so the records' regions are written out of the store's
// write buffers: reads of them go to the device.
func putColdAlone(t *testing.T, tc *tier.Cache, recs map[string][]byte) {
	t.Helper()
	wait := func(k string) {
		deadline := time.Now().Add(10 * time.Second)
		for tc.Where([]byte(k)) != "cold" {
			if time.Now().After(deadline) {
				t.Fatalf("%s is in %q, not cold alone", k, tc.Where([]byte(k)))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for k, v := range recs {
		kind := kindHash
		if strings.Contains(k, "list") {
			kind = kindList
		}
		if _, err := tc.Set([]byte(k), v, tier.SetOptions{Kind: kind}); err != nil {
			t.Fatal(err)
		}
		wait(k)
	}
	for i := range 4 {
		if _, err := tc.Set([]byte(fmt.Sprint("filler", i)), make([]byte, 200<<10), tier.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		wait(fmt.Sprint("filler", i))
	}
}

// pieceRead is a command, its reply and the most 4 KiB blocks it may read.
type pieceRead struct {
	cmd       []string
	want      string
	maxBlocks int
}

// readsFewBlocks runs each read and checks its reply and the 4 KiB
// blocks it read (read: the bytes read so far).
func readsFewBlocks(t *testing.T, r *exactConn, read func() uint64, reads []pieceRead) {
	t.Helper()
	const block = 4096
	for _, tc := range reads {
		before := read()
		if got := r.do(tc.cmd...); got != tc.want {
			t.Fatalf("%q: %q, want %q", tc.cmd, got, tc.want)
		}
		n := read() - before
		if blocks := int((n + block - 1) / block); blocks > tc.maxBlocks {
			t.Fatalf("%q read %d bytes: %d blocks, want at most %d", tc.cmd, n, blocks, tc.maxBlocks)
		} else {
			t.Logf("%q: %d blocks (%d bytes)", tc.cmd, blocks, n)
		}
	}
}

// checkHGetAll checks HGETALL key answers exactly fields.
func checkHGetAll(t *testing.T, r *exactConn, key string, fields []hash.Field) {
	t.Helper()
	got := parseReply(r.do("HGETALL", key))
	if len(got.kids) != 2*len(fields) {
		t.Fatalf("HGETALL: %d items, want %d", len(got.kids), 2*len(fields))
	}
	seen := map[string]string{}
	for i := 0; i+1 < len(got.kids); i += 2 {
		seen[strings.TrimSuffix(got.kids[i].body, "\r\n")] = strings.TrimSuffix(got.kids[i+1].body, "\r\n")
	}
	for _, f := range fields {
		if seen[string(f.Name)] != string(f.Value) {
			t.Fatalf("HGETALL: %s = %q, want %q", f.Name, seen[string(f.Name)], f.Value)
		}
	}
}

func lrangeReply(items [][]byte) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(items)) + "\r\n")
	for _, it := range items {
		b.WriteString("$" + strconv.Itoa(len(it)) + "\r\n" + string(it) + "\r\n")
	}
	return b.String()
}

// TestTenantColdAggregateReadsItsPieces is S48: a large hash and list of
// a tenant with a cold namespace of its own (coldstore.Multi) are read
// from their pieces there as S45's are, from that namespace alone.
func TestTenantColdAggregateReadsItsPieces(t *testing.T) {
	tc, store, path := openPiecesServer(t, func(o *tier.Options, cc *coldstore.Config) {
		o.Tenants = []tier.Tenant{{Name: "a", Prefix: "a:", Quota: 1 << 20}}
		cc.Tenants = []coldstore.TenantSpace{{Name: "a", Bytes: 16 << 20}}
	})
	if _, ok := store.(*coldstore.Multi); !ok {
		t.Fatalf("the cold store is a %T, not a Multi", store)
	}
	fields, items := bigAggregates()
	putColdAlone(t, tc, map[string][]byte{"a:hash": hash.Encode(nil, fields), "a:list": list.Encode(nil, items)})
	deviceRead := func(tenant string) uint64 {
		for _, r := range store.Stats().Tenants {
			if r.Name == tenant {
				return r.DeviceRead
			}
		}
		t.Fatalf("no tenant %s in the cold store's figures", tenant)
		return 0
	}
	r := dialExact(t, path)
	elsewhere := deviceRead("default")
	readsFewBlocks(t, r, func() uint64 { return deviceRead("a") }, []pieceRead{
		{[]string{"HGET", "a:hash", "field:4711"}, "$10\r\nvalue-4711\r\n", 3},
		{[]string{"HMGET", "a:hash", "field:1", "field:9999"}, "*2\r\n$7\r\nvalue-1\r\n$10\r\nvalue-9999\r\n", 5},
		{[]string{"HLEN", "a:hash"}, ":10000\r\n", 2},
		{[]string{"LRANGE", "a:list", "0", "9"}, lrangeReply(items[:10]), 4},
		{[]string{"LINDEX", "a:list", "-3"}, "$16\r\n" + string(items[len(items)-3]) + "\r\n", 4},
	})
	if n := deviceRead("default") - elsewhere; n != 0 {
		t.Fatalf("the reads of a's keys read %d bytes of the default namespace", n)
	}
	checkHGetAll(t, r, "a:hash", fields)
}
