package sidecar

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/vmtest/guest/kvtcp"
)

// TestSidecarColdKVSSDOverTCP (V25) is the whole sidecar with cold.backend
// passthrough on a KV SSD: `tiercache kvtarget` attached through the
// kernel's nvme-tcp host as /dev/ngXnY (vmtest/guest/kvtcp). The
// flusher's linked SQE chains (256 KiB values as chunks of at most 128 KiB,
// header last) go through the real driver; SET, GET and MGET batches
// answer what was SET, and after a draining restart every key comes back
// from cold.
func TestSidecarColdKVSSDOverTCP(t *testing.T) {
	requireGuest(t)
	d := kvtcp.Attach(t, "/tmp/kvssd.img", "256MiB")
	dir := t.TempDir()
	socket := "/tmp/tc-vm-kvssd.sock"
	cfg := filepath.Join(dir, "tiercache.yaml")
	c := strings.Replace(config(dir, socket), "  backend: emulated\n", "  backend: passthrough\n  device: "+d.NG+"\n", 1)
	c = strings.Replace(c, "  data_dir: "+filepath.Join(dir, "data")+"\n  path: "+coldDevice+"\n  capacity: 128MiB\n", "", 1)
	if err := os.WriteFile(cfg, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := start(t, cfg, socket)
	rc := p.client()
	if b := info(t, rc, "tiers")["cold_backend"]; b != "passthrough:"+d.NG {
		t.Fatalf("cold_backend %q, want passthrough:%s", b, d.NG)
	}
	for i := 0; i < smallKeys; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("small:%d", i), fmt.Sprintf("v%d", i), 0).Err(); err != nil {
			t.Fatalf("SET small:%d: %v", i, err)
		}
	}
	for i := 0; i < nvmeBigKeys; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("big:%d", i), value(i, bigValue), 0).Err(); err != nil {
			t.Fatalf("SET big:%d: %v", i, err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		tiers := info(t, rc, "tiers")
		if infoInt(t, tiers, "cold_bytes_written") >= bigValue && infoInt(t, tiers, "flusher_queue") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no value reached the cold tier within 2m: %v\ntarget: %s", tiers, d.TargetOutput())
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkNVMe(ctx, t, rc)
	rc.Close()
	p.stop()

	p = start(t, cfg, socket)
	rc = p.client()
	defer rc.Close()
	allFromCold(t, rc, smallKeys+nvmeBigKeys, func() { checkNVMe(ctx, t, rc) })
	p.stop()
	if s, _ := os.ReadFile("/sys/class/nvme/" + d.Ctrl + "/state"); strings.TrimSpace(string(s)) != "live" {
		t.Fatalf("%s state %q after the run\nkernel: %s", d.Ctrl, s, kvtcp.KernelLog("nvme"))
	}
}
