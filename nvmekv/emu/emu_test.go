package emu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

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
