package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	coldDevice = "/dev/nvme1n1" // vmtest.ColdSerial controller
	bigValue   = 256 << 10      // above hot.max_value: goes to warm, then cold
	bigKeys    = 96             // 24 MiB through an 8 MiB warm tier
	smallKeys  = 200
)

// config is the sidecar configuration under test: small hot and warm tiers
// so that big values overflow into cold, warm strictly bound to node 1,
// cold on the NVMe block device, drain on shutdown. The flusher queue holds
// everything written (no drops by design), so every key must come back.
func config(dir, socket string) string {
	return fmt.Sprintf(`server:
  socket: %s
hot:
  bytes: 4MiB
  max_value: 16KiB
warm:
  bytes: 8MiB
  segment: 1MiB
  node: "1"
  policy: bind
  fallback: strict
cold:
  backend: emulated
  data_dir: %s
  path: %s
  capacity: 128MiB
flusher:
  queue_items: 4096
  queue_bytes: 128MiB
  # the guest runs under TCG on a shared host: a write may wait for the
  # flusher longer than the default 2s before cold takes the batch
  wait: 30s
durability: drain
max_value: 1MiB
metrics:
  listen: "off"
logging:
  level: warn
  format: json
`, socket, filepath.Join(dir, "data"), coldDevice)
}

func TestNumaCommandPicksNode1(t *testing.T) {
	requireGuest(t)
	out, err := exec.Command(binary(t), "numa").CombinedOutput()
	if err != nil {
		t.Fatalf("tiercache numa: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "warm tier node: 1") {
		t.Fatalf("tiercache numa does not pick node 1:\n%s", out)
	}
}

// TestSidecarWarmNode1ColdNVMeRestart is the whole product in the guest:
// SET/GET over the socket, big values reaching the cold tier on NVMe, a
// clean restart, every key back.
func TestSidecarWarmNode1ColdNVMeRestart(t *testing.T) {
	requireGuest(t)
	dir := t.TempDir()
	socket := "/tmp/tc-vm.sock"
	cfg := filepath.Join(dir, "tiercache.yaml")
	if err := os.WriteFile(cfg, []byte(config(dir, socket)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	t0 := time.Now()
	p := start(t, cfg, socket)
	rc := p.client()
	tiers := info(t, rc, "tiers")
	if tiers["warm_numa_node"] != "1" || tiers["warm_placement"] != "1.0000" {
		t.Fatalf("warm tier: node %q placement %q, want 1 and 1.0000", tiers["warm_numa_node"], tiers["warm_placement"])
	}
	for i := 0; i < smallKeys; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("small:%d", i), fmt.Sprintf("v%d", i), 0).Err(); err != nil {
			t.Fatalf("SET small:%d: %v", i, err)
		}
	}
	for i := 0; i < bigKeys; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("big:%d", i), value(i, bigValue), 0).Err(); err != nil {
			t.Fatalf("SET big:%d: %v", i, err)
		}
	}
	t.Logf("started and wrote %d keys in %v", smallKeys+bigKeys, time.Since(t0).Round(time.Millisecond))
	// The warm tier (8 MiB) cannot hold 24 MiB: evictions flow to cold.
	deadline := time.Now().Add(time.Minute)
	for {
		tiers = info(t, rc, "tiers")
		if infoInt(t, tiers, "cold_bytes_written") >= bigValue && infoInt(t, tiers, "flusher_queue") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no value reached the cold tier within 1m: %v", tiers)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if d := infoInt(t, tiers, "flusher_drops"); d != 0 {
		t.Fatalf("flusher dropped %d items (queue sized to hold everything)", d)
	}
	if infoInt(t, tiers, "tier_warm_evictions") == 0 {
		t.Fatalf("warm evicted nothing: %v", tiers)
	}
	t.Logf("before restart: cold bytes written %s in %s flusher batches, warm items %s (evicted %s), hot items %s",
		tiers["cold_bytes_written"], tiers["flusher_batches"], tiers["tier_warm_items"], tiers["tier_warm_evictions"], tiers["tier_hot_items"])
	checkAll(ctx, t, rc)
	if tiers = info(t, rc, "tiers"); infoInt(t, tiers, "tier_cold_hits") == 0 || infoInt(t, tiers, "cold_bytes_read") == 0 {
		t.Fatalf("reading every key back never read the cold tier: %v", tiers)
	}
	rc.Close()
	t1 := time.Now()
	p.stop()
	t.Logf("drained and stopped in %v", time.Since(t1).Round(time.Millisecond))

	t1 = time.Now()
	p = start(t, cfg, socket)
	t.Logf("restarted in %v", time.Since(t1).Round(time.Millisecond))
	rc = p.client()
	defer rc.Close()
	tiers = info(t, rc, "tiers")
	if tiers["warm_numa_node"] != "1" {
		t.Fatalf("after restart warm node %q, want 1", tiers["warm_numa_node"])
	}
	allFromCold(t, rc, smallKeys+bigKeys, func() { checkAll(ctx, t, rc) })
	p.stop()
}

// allFromCold checks a restarted sidecar: hot and warm are empty, check
// reads every key back, and at least keys of those reads came from cold.
func allFromCold(t *testing.T, rc *redis.Client, keys int64, check func()) {
	t.Helper()
	tiers := info(t, rc, "tiers")
	if h, n := infoInt(t, tiers, "tier_hot_items"), infoInt(t, tiers, "tier_warm_items"); h != 0 || n != 0 {
		t.Fatalf("after restart hot holds %d and warm %d items, want both empty (the keys live in cold)", h, n)
	}
	check()
	tiers = info(t, rc, "tiers")
	if h := infoInt(t, tiers, "tier_cold_hits"); h < keys {
		t.Fatalf("after restart %d reads came from the cold tier, want all %d", h, keys)
	}
	t.Logf("after restart: cold hits %s, cold bytes read %s", tiers["tier_cold_hits"], tiers["cold_bytes_read"])
}

// checkAll GETs every key and compares it with what was SET.
func checkAll(ctx context.Context, t *testing.T, rc *redis.Client) {
	t.Helper()
	for i := 0; i < smallKeys; i++ {
		k := fmt.Sprintf("small:%d", i)
		if v, err := rc.Get(ctx, k).Result(); err != nil || v != fmt.Sprintf("v%d", i) {
			t.Fatalf("GET %s = %q, %v", k, v, err)
		}
	}
	for i := 0; i < bigKeys; i++ {
		k := fmt.Sprintf("big:%d", i)
		v, err := rc.Get(ctx, k).Bytes()
		if err != nil || !bytes.Equal(v, value(i, bigValue)) {
			t.Fatalf("GET %s = %d bytes, %v; want the %d bytes SET", k, len(v), err, bigValue)
		}
	}
}
