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
	tc, store, path := openPiecesServer(t)
	fields := make([]hash.Field, 10000)
	for i := range fields {
		fields[i] = hash.Field{Name: []byte(fmt.Sprint("field:", i)), Value: []byte(fmt.Sprint("value-", i))}
	}
	items := make([][]byte, 100000)
	for i := range items {
		items[i] = []byte(fmt.Sprintf("element-%08d", i))
	}
	putColdAlone(t, tc, map[string][]byte{"bighash": hash.Encode(nil, fields), "biglist": list.Encode(nil, items)})
	ns := store.KV().Namespace().(interface{ Stats() emu.Stats })
	r := dialExact(t, path)
	readsFewBlocks(t, r, ns, []pieceRead{
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
	before := ns.Stats()
	checkHGetAll(t, r, "bighash", fields)
	t.Logf("HGETALL: %d reads, %d bytes", ns.Stats().DiskReads-before.DiskReads, ns.Stats().ReadBytes-before.ReadBytes)
	before = ns.Stats()
	if got := r.do("LRANGE", "biglist", "1000", "2999"); got != lrangeReply(items[1000:3000]) {
		t.Fatalf("LRANGE 1000 2999 of the cold list differs (%d bytes)", len(got))
	}
	t.Logf("LRANGE 1000 2999: %d reads, %d bytes", ns.Stats().DiskReads-before.DiskReads, ns.Stats().ReadBytes-before.ReadBytes)
}

// openPiecesServer is a server on a cache whose large values go straight
// to an emulated cold store that cuts aggregates into pieces (ColdCut),
// never promoted back.
func openPiecesServer(t *testing.T) (*tier.Cache, *coldstore.Store, string) {
	var store *coldstore.Store
	tc := openColdCache(t, func(o *tier.Options, cc *coldstore.Config) {
		o.HotMaxValue = 1 << 10 // the records go straight to cold
		o.Promotion.Disabled = true
		cc.Capacity, cc.RegionBytes, cc.Cut = 64<<20, 256<<10, ColdCut
		o.OpenCold = func(p backend.Params) (backend.Store, error) {
			s, err := coldstore.Open(*cc, p)
			store, _ = s.(*coldstore.Store)
			return s, err
		}
	})
	_, path := startServerWith(t, tc, nil)
	return tc, store, path
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

// readsFewBlocks runs each read and checks its reply and the blocks it
// read from the emulated namespace ns.
func readsFewBlocks(t *testing.T, r *exactConn, ns interface{ Stats() emu.Stats }, reads []pieceRead) {
	t.Helper()
	const block = 4096
	for _, tc := range reads {
		before := ns.Stats()
		if got := r.do(tc.cmd...); got != tc.want {
			t.Fatalf("%q: %q, want %q", tc.cmd, got, tc.want)
		}
		after := ns.Stats()
		read := after.ReadBytes - before.ReadBytes
		if blocks := int((read + block - 1) / block); blocks > tc.maxBlocks {
			t.Fatalf("%q read %d bytes in %d reads: %d blocks, want at most %d", tc.cmd, read, after.DiskReads-before.DiskReads, blocks, tc.maxBlocks)
		} else {
			t.Logf("%q: %d blocks (%d bytes, %d reads)", tc.cmd, blocks, read, after.DiskReads-before.DiskReads)
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
