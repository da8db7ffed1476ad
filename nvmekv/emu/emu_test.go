package emu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
)

var ctx = context.Background()

func TestStoreRetrieveReopen(t *testing.T) {
	o := testOptions(t)
	ns := mustOpen(t, o)
	for i := 0; i < 200; i++ {
		k := []byte(fmt.Sprintf("key-%04d", i))
		if err := ns.Store(ctx, k, bytes.Repeat([]byte{byte(i)}, 100+i*10), 0); err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
	}
	check := func(ns *Namespace, what string) {
		t.Helper()
		buf := make([]byte, 4096)
		for i := 0; i < 200; i++ {
			k := []byte(fmt.Sprintf("key-%04d", i))
			n, err := ns.Retrieve(ctx, k, buf)
			if err != nil || n != 100+i*10 || !bytes.Equal(buf[:n], bytes.Repeat([]byte{byte(i)}, n)) {
				t.Fatalf("%s: retrieve %d: n=%d err=%v", what, i, n, err)
			}
		}
		if _, err := ns.Retrieve(ctx, []byte("missing"), buf); !errors.Is(err, nvmekv.ErrKeyNotFound) {
			t.Fatalf("%s: missing key: %v", what, err)
		}
	}
	check(ns, "open")
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	ns = mustOpen(t, o)
	if ns.Stats().Recovered != "checkpoint" {
		t.Fatalf("recovered by %q after a clean close", ns.Stats().Recovered)
	}
	check(ns, "checkpoint")
	ns.Close()
	o2 := o
	o2.CheckpointPath = "-"
	ns = mustOpen(t, o2)
	if ns.Stats().Recovered != "scan" {
		t.Fatalf("recovered by %q without checkpoint", ns.Stats().Recovered)
	}
	check(ns, "scan")
	ns.Close()
}

// TestSyncWrites: with SyncWrites every Do with a Store is flushed before
// it returns, so a crash right after (no Close) loses nothing.
func TestSyncWrites(t *testing.T) {
	o := testOptions(t)
	o.SyncWrites = true
	ns := mustOpen(t, o)
	for i := 0; i < 50; i++ {
		if err := ns.Store(ctx, []byte(fmt.Sprintf("s%d", i)), []byte("durable"), 0); err != nil {
			t.Fatal(err)
		}
	}
	if st := ns.Stats(); st.Syncs < 50 {
		t.Fatalf("%d syncs for 50 write-through stores", st.Syncs)
	}
	ns.release() // drop without Close, as a crash would
	ns = mustOpen(t, o)
	defer ns.Close()
	for i := 0; i < 50; i++ {
		if ok, err := ns.Exist(ctx, []byte(fmt.Sprintf("s%d", i))); !ok || err != nil {
			t.Fatalf("write-through key %d lost: %v", i, err)
		}
	}
}

// TestConcurrent hammers one namespace from several goroutines (run it with -race).
func TestConcurrent(t *testing.T) {
	o := testOptions(t)
	ns := mustOpen(t, o)
	defer ns.Close()
	inGoroutines(t, 8, func(g int) error {
		buf := make([]byte, 4096)
		for i := 0; i < 300; i++ {
			k := []byte(fmt.Sprintf("g%d-%d", g, i%50))
			v := bytes.Repeat([]byte{byte(g)}, 100+i)
			if err := ns.Store(ctx, k, v, 0); err != nil {
				return err
			}
			n, err := ns.Retrieve(ctx, k, buf)
			if errors.Is(err, nvmekv.ErrKeyNotFound) {
				continue // reclaimed by another goroutine's writes
			}
			if err != nil || buf[0] != byte(g) || n < 100 {
				return fmt.Errorf("g%d i%d: n=%d err=%v", g, i, n, err)
			}
			if i%50 == 0 {
				if err := ns.Flush(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// TestRefuseForeignData: a file with other data is never formatted unless asked.
func TestRefuseForeignData(t *testing.T) {
	o := testOptions(t)
	if err := os.WriteFile(o.Path, []byte("precious data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(o); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), o.Path) {
		t.Fatalf("Open over foreign data = %v", err)
	}
	if b, _ := os.ReadFile(o.Path); string(b) != "precious data" {
		t.Fatal("foreign file modified")
	}
	o.Format = true
	ns := mustOpen(t, o)
	ns.Close()
	o.RegionBytes *= 2
	if _, err := Open(o); !errors.Is(err, ErrFormat) {
		t.Fatalf("Open with another region size = %v", err)
	}
}

// TestFlushCommand: an NVMe Flush op in a batch makes the batch durable.
func TestFlushCommand(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	defer ns.Close()
	before := ns.Stats().Syncs
	ops := []*nvmekv.Op{{Code: nvmekv.OpStore, Key: []byte("k"), Buf: []byte("v")}, {Code: nvmekv.OpFlush}}
	if err := ns.Do(ctx, ops...); err != nil || ops[0].Err != nil || ops[1].Err != nil {
		t.Fatalf("store+flush: %v %v %v", err, ops[0].Err, ops[1].Err)
	}
	if ns.Stats().Syncs == before {
		t.Fatal("Flush command did not sync")
	}
}

// TestListPaging lists 1000 keys of 1..16 bytes through small List buffers,
// continuing from the last key returned, and gets every key once, in order.
func TestListPaging(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	defer ns.Close()
	want := map[string]bool{}
	for i := 0; i < 1000; i++ {
		k := fmt.Sprintf("%x", i*7919)
		k = k[:1+i%len(k)] + strings.Repeat("z", i%8)
		if len(k) > 16 {
			k = k[:16]
		}
		if err := ns.Store(ctx, []byte(k), nil, 0); err != nil {
			t.Fatal(err)
		}
		want[k] = true
	}
	var got []string
	start := []byte(nil)
	for pages := 0; pages < 2000; pages++ {
		keys, total, err := ns.List(ctx, start, 100)
		if err != nil {
			t.Fatal(err)
		}
		if pages == 0 && int(total) != len(want) {
			t.Fatalf("List from the start found %d keys, want %d", total, len(want))
		}
		for _, k := range keys {
			if len(got) > 0 && string(k) <= got[len(got)-1] {
				continue // the start key itself (inclusive) or out of order
			}
			got = append(got, string(k))
		}
		if len(keys) == 0 || (len(keys) == 1 && start != nil && string(keys[0]) == string(start)) {
			break
		}
		start = append([]byte(nil), keys[len(keys)-1]...)
	}
	if len(got) != len(want) {
		t.Fatalf("paged through %d keys, want %d", len(got), len(want))
	}
	for i, k := range got {
		if !want[k] || (i > 0 && got[i-1] >= k) {
			t.Fatalf("key %d %q unexpected or out of order", i, k)
		}
	}
}

// TestStallAfterOption: Options.StallAfter reaches the namespace's rings
// (0 = the ring's default, negative = off), and a value below
// uring.MinStallAfter is refused before anything is opened.
func TestStallAfterOption(t *testing.T) {
	for _, tc := range []struct{ set, want time.Duration }{
		{0, 30 * time.Second},
		{-1, -1},
		{2 * time.Minute, 2 * time.Minute},
	} {
		o := testOptions(t)
		o.StallAfter = tc.set
		ns := mustOpen(t, o)
		if got := ns.rg.Main().Options().StallAfter; got != tc.want {
			t.Errorf("StallAfter %v: the ring runs with %v, want %v", tc.set, got, tc.want)
		}
		if ns.rg.Quick() != nil && ns.rg.Quick().Options().StallAfter != tc.want {
			t.Errorf("StallAfter %v: the lone-read ring runs with %v, want %v", tc.set, ns.rg.Quick().Options().StallAfter, tc.want)
		}
		ns.Close()
	}
	o := testOptions(t)
	o.StallAfter = time.Millisecond
	if ns, err := Open(o); !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), "StallAfter") {
		if err == nil {
			ns.Close()
		}
		t.Fatalf("StallAfter 1ms: err = %v, want ErrBadOptions naming StallAfter", err)
	}
	if _, err := os.Stat(o.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused Open left %s behind (stat: %v)", o.Path, err)
	}
}
