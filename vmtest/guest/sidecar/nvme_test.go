package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tiercache/tiercache/vmtest"
)

const (
	coldNG      = "/dev/ng1n1" // the cold controller's namespace, generic char device
	nvmeBigKeys = 64           // 16 MiB through an 8 MiB warm tier
)

// zeroSuperblock clears the first 4 KiB of the cold namespace (the
// emulated store's superblock) so the test formats afresh, and again at
// the end so the other cold-tier test does too.
func zeroSuperblock(t *testing.T) {
	t.Helper()
	if err := vmtest.ZeroSuperblock(coldNG); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := vmtest.ZeroSuperblock(coldNG); err != nil {
			t.Error(err)
		}
	})
}

// TestSidecarColdNVMePassthroughRestart is the sidecar with its cold tier
// on /dev/ng1n1 through NVM passthrough (cold.backend nvme, cold.iopoll:
// reads polled on the driver's poll queue): SET, GET and MGET batches over
// the socket with big values reaching cold, a draining restart, and every
// key back from cold.
func TestSidecarColdNVMePassthroughRestart(t *testing.T) {
	requireGuest(t)
	zeroSuperblock(t)
	dir := t.TempDir()
	socket := "/tmp/tc-vm-nvme.sock"
	cfg := filepath.Join(dir, "tiercache.yaml")
	c := strings.Replace(config(dir, socket), "  backend: emulated\n", "  backend: nvme\n  device: "+coldNG+"\n  iopoll: true\n", 1)
	if err := os.WriteFile(cfg, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	setCheckRestart(t, cfg, socket, "nvme:"+coldNG, time.Minute, nil)
}

// setCheckRestart runs the sidecar on cfg, checks INFO's cold_backend is
// backend, SETs the small and the big keys, waits (up to wait) until big
// values reached cold and the flusher queue is empty, reads everything back
// (GET and MGET batches), restarts it with a draining SIGTERM and checks
// every key comes back from cold. diag, if set, adds to a failure report.
func setCheckRestart(t *testing.T, cfg, socket, backend string, wait time.Duration, diag func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute+wait)
	defer cancel()
	p := start(t, cfg, socket)
	rc := p.client()
	if b := info(t, rc, "tiers")["cold_backend"]; b != backend {
		t.Fatalf("cold_backend %q, want %s", b, backend)
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
	deadline := time.Now().Add(wait)
	for {
		tiers := info(t, rc, "tiers")
		if infoInt(t, tiers, "cold_bytes_written") >= bigValue && infoInt(t, tiers, "flusher_queue") == 0 {
			break
		}
		if time.Now().After(deadline) {
			extra := ""
			if diag != nil {
				extra = "\n" + diag()
			}
			t.Fatalf("no value reached the cold tier within %v: %v%s", wait, tiers, extra)
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
}

// checkNVMe reads every key with GET (big) and MGET batches of 16
// (small), comparing with what was SET.
func checkNVMe(ctx context.Context, t *testing.T, rc *redis.Client) {
	t.Helper()
	for i := 0; i < smallKeys; i += 16 {
		var keys []string
		for j := i; j < min(i+16, smallKeys); j++ {
			keys = append(keys, fmt.Sprintf("small:%d", j))
		}
		vs, err := rc.MGet(ctx, keys...).Result()
		if err != nil {
			t.Fatalf("MGET %s..: %v", keys[0], err)
		}
		for j, v := range vs {
			if s, _ := v.(string); s != fmt.Sprintf("v%d", i+j) {
				t.Fatalf("MGET %s = %v", keys[j], v)
			}
		}
	}
	for i := 0; i < nvmeBigKeys; i++ {
		k := fmt.Sprintf("big:%d", i)
		v, err := rc.Get(ctx, k).Bytes()
		if err != nil || !bytes.Equal(v, value(i, bigValue)) {
			t.Fatalf("GET %s = %d bytes, %v; want the %d bytes SET", k, len(v), err, bigValue)
		}
	}
}
