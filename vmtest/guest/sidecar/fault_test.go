package sidecar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// faultConfig runs the sidecar in writethrough mode (every acknowledged
// SET is durable in cold) on the mapped device at dev.
func faultConfig(dir, socket, dev string) string {
	return smallConfig(socket, fmt.Sprintf(`backend: emulated
  data_dir: %s
  path: %s
  capacity: 96MiB`, filepath.Join(dir, "data"), dev), "writethrough", faultMetrics)
}

// smallConfig is a sidecar with small hot and warm tiers, so that big
// values live only in cold: cold is the cold section's fields, metrics
// where /metrics is served ("off": nowhere).
func smallConfig(socket, cold, durability, metrics string) string {
	return fmt.Sprintf(`server:
  socket: %s
  socket_mode: "0666"
hot:
  bytes: 4MiB
  max_value: 16KiB
warm:
  bytes: 8MiB
  segment: 1MiB
  node: unbound
cold:
  %s
durability: %s
max_value: 1MiB
metrics:
  listen: %q
logging:
  level: warn
  format: json
`, socket, cold, durability, metrics)
}

// faultMetrics is where the fault tests' sidecar serves /metrics.
const faultMetrics = "127.0.0.1:9187"

// scrape returns the sample lines of /metrics that start with prefix.
func scrape(t *testing.T, prefix string) []string {
	t.Helper()
	resp, err := http.Get("http://" + faultMetrics + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

const (
	faultSmall   = 300       // 1 KiB values: hot copies and cold copies
	faultBig     = 48        // 256 KiB values: above hot.max_value, 12 MiB through an 8 MiB warm tier
	faultBigSize = 256 << 10 // bytes
)

func faultKey(big bool, i int) string {
	if big {
		return fmt.Sprintf("durable:big:%d", i)
	}
	return fmt.Sprintf("durable:small:%d", i)
}

// writeDurable SETs the durable keys; every SET must succeed.
func writeDurable(ctx context.Context, t *testing.T, rc *redis.Client) {
	t.Helper()
	for i := 0; i < faultSmall; i++ {
		if err := rc.Set(ctx, faultKey(false, i), value(i, 1024), 0).Err(); err != nil {
			t.Fatalf("SET %s on a healthy device: %v", faultKey(false, i), err)
		}
	}
	for i := 0; i < faultBig; i++ {
		if err := rc.Set(ctx, faultKey(true, i), value(i, faultBigSize), 0).Err(); err != nil {
			t.Fatalf("SET %s on a healthy device: %v", faultKey(true, i), err)
		}
	}
}

// readDurable GETs every durable key: it returns how many read their value
// and how many read nil; any other value or an error reply fails the test.
func readDurable(ctx context.Context, t *testing.T, rc *redis.Client) (found, missing int) {
	t.Helper()
	for _, big := range []bool{false, true} {
		n, size := faultSmall, 1024
		if big {
			n, size = faultBig, faultBigSize
		}
		for i := 0; i < n; i++ {
			v, err := rc.Get(ctx, faultKey(big, i)).Bytes()
			switch {
			case errors.Is(err, redis.Nil):
				missing++
			case err != nil:
				t.Fatalf("GET %s: %v", faultKey(big, i), err)
			case !bytes.Equal(v, value(i, size)):
				t.Fatalf("GET %s: %d bytes, not the value SET", faultKey(big, i), len(v))
			default:
				found++
			}
		}
	}
	return found, missing
}

// TestSidecarColdDeviceFaults puts the cold store on a device-mapper
// device over a loop device and makes the device fail under the running
// sidecar (writethrough, so every acknowledged SET was durable):
//
//  0. an error target over the log regions already full (reads of old
//     data fail, writes work): SETs succeed, cold reads of those keys are
//     misses counted in cold_errors, and once the table is linear again
//     every durable key reads its value (a failed read forgets nothing);
//     then dm-flakey error_reads over the whole device (Linux 6.12: every
//     read fails with EIO, every write works): the same, and the SETs
//     made meanwhile read back once reads work again;
//  1. dm-flakey error_writes (writes fail with EIO, reads work): SETs
//     answer an error naming the cause, INFO shows cold_writable:0, the
//     write error and counted cold errors, every durable key still reads
//     its value (hot from memory, the rest from the device), and no SET
//     that answered the error reads back a value (issue 18 item 3);
//  2. the table swapped to dm-error (reads fail too): the server keeps
//     answering, keys with a memory copy are served, cold reads are misses
//     counted in cold_errors;
//  3. the linear table back and a restart: every durable key reads its
//     value again (nothing durable was lost);
//  4. dm-flakey drop_writes (the device acknowledges writes it drops):
//     the SETs succeed; after the linear table and a restart, each such
//     key reads its value or nil, never another value, and every key
//     durable before still reads its value.
func TestSidecarColdDeviceFaults(t *testing.T) {
	requireGuest(t)
	dir := t.TempDir()
	dm := newFaultDisk(t, dir, "tcfault")
	linear, errTable := dm.linear(), []dmTarget{{0, dm.sectors, "error", ""}}
	t.Logf("cold store on %s (dm linear over %s, %d:%d)", dm.node, dm.loop, dm.major, dm.minor)

	socket := "/tmp/tc-fault.sock"
	cfg := filepath.Join(dir, "tiercache.yaml")
	if err := os.WriteFile(cfg, []byte(faultConfig(dir, socket, dm.node)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := start(t, cfg, socket)
	rc := p.client()
	writeDurable(ctx, t, rc)
	if found, missing := readDurable(ctx, t, rc); missing != 0 {
		t.Fatalf("healthy device: %d durable keys found, %d missing", found, missing)
	}

	// 0. Reads of the regions already full fail, writes work: media
	// errors under old data. Region r of the log is at 4096 + r × 4 MiB
	// (nvmekv/emu layout); the regions before the one being written are
	// complete, so an error target over them leaves every write alone.
	tiers := info(t, rc, "tiers")
	const region = 4 << 20
	full := infoInt(t, tiers, "cold_bytes_written")/region - 1
	if full < 1 {
		t.Fatalf("only %s bytes written to cold: no full region to fail", tiers["cold_bytes_written"])
	}
	bad := uint64(4096+full*region) / 512
	dm.swap(t, []dmTarget{{0, bad, "error", ""}, dm.linearFrom(bad)})
	readsFail(ctx, t, rc, "media", fmt.Sprintf("old regions unreadable (%d MiB)", bad*512>>20))
	dm.swap(t, linear)
	readsWorkAgain(ctx, t, rc, "media")

	// 0b. Every read fails, every write works: dm-flakey's error_reads
	// (a feature of 6.12's dm-flakey; 6.1's fails reads in its down state
	// only when no write feature is set, and then fails writes too).
	dm.swap(t, dm.flakey("1 error_reads"))
	readsFail(ctx, t, rc, "readfail", "every read fails (flakey error_reads)")
	dm.swap(t, linear)
	readsWorkAgain(ctx, t, rc, "readfail")

	// 1. Writes fail.
	dm.swap(t, dm.flakey("1 error_writes"))
	var setErr error
	failed := 0
	for i := 0; i < 50; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("during:%d", i), value(i, 1024), 0).Err(); err != nil {
			failed++
			setErr = err
		}
	}
	if failed != 50 {
		t.Fatalf("writes fail: %d of 50 writethrough SETs answered an error, want all (last: %v)", failed, setErr)
	}
	t.Logf("writes fail: a SET answers %q", setErr)
	if s := setErr.Error(); !strings.Contains(s, "input/output error") && !strings.Contains(s, "read-only") {
		t.Errorf("the SET error %q names neither the I/O error nor the read-only store", s)
	}
	tiers = info(t, rc, "tiers")
	if tiers["cold_writable"] != "0" || !strings.Contains(tiers["cold_write_error"], "input/output error") {
		t.Errorf("writes fail: cold_writable %q, cold_write_error %q; want 0 and the EIO", tiers["cold_writable"], tiers["cold_write_error"])
	}
	coldErrs := infoInt(t, tiers, "cold_errors")
	if coldErrs+infoInt(t, tiers, "flusher_errors") == 0 {
		t.Errorf("writes fail: no cold_errors or flusher_errors counted: %v", tiers)
	}
	if found, missing := readDurable(ctx, t, rc); missing != 0 {
		t.Errorf("writes fail, reads work: %d durable keys found, %d missing", found, missing)
	}
	m := append(scrape(t, "tiercache_cold_writable"), scrape(t, "tiercache_flusher_errors_total")...)
	if len(m) != 2 || m[0] != "tiercache_cold_writable 0" || m[1] == "tiercache_flusher_errors_total 0" {
		t.Errorf("writes fail: /metrics has %q; want cold_writable 0 and the flusher errors counted", m)
	}
	leaked := 0
	for i := 0; i < 50; i++ {
		if rc.Get(ctx, fmt.Sprintf("during:%d", i)).Err() == nil {
			leaked++
		}
	}
	t.Logf("writes fail: cold_errors %s, flusher_errors %s, lost %s; %d of the 50 failed SETs read back a value",
		tiers["cold_errors"], tiers["flusher_errors"], tiers["lost"], leaked)
	if leaked != 0 {
		t.Errorf("writes fail: %d of the 50 SETs that answered an error read back a value (an error reply changed state)", leaked)
	}

	// 2. Reads fail too.
	dm.swap(t, errTable)
	if err := rc.Ping(ctx).Err(); err != nil {
		t.Fatalf("device failing: PING: %v", err)
	}
	found, missing := readDurable(ctx, t, rc)
	tiers = info(t, rc, "tiers")
	t.Logf("device failing: %d durable keys served from memory, %d misses; cold_errors %s, tier_hot_items %s, tier_warm_items %s",
		found, missing, tiers["cold_errors"], tiers["tier_hot_items"], tiers["tier_warm_items"])
	if found == 0 {
		t.Errorf("device failing: no durable key was served from the memory tiers")
	}
	t.Logf("device failing: /metrics %q", scrape(t, "tiercache_cold_errors_total"))
	if grew := infoInt(t, tiers, "cold_errors") - coldErrs; grew < int64(missing) {
		t.Errorf("device failing: %d misses but cold_errors grew by %d", missing, grew)
	}
	rc.Close()

	// A clean stop on the failing device ends (the store is read-only
	// since the failed write: nothing more to make durable).
	t0 := time.Now()
	code := p.term(time.Minute)
	out := p.out.String()
	if i := strings.LastIndex(out, `"msg":"shutdown"`); i >= 0 {
		out = out[i:]
	}
	t.Logf("device failing: SIGTERM: exit %d after %v; %.400s", code, time.Since(t0).Round(time.Millisecond), out)

	// 3. Repaired, restarted: nothing durable is lost.
	dm.swap(t, linear)
	p = start(t, cfg, socket)
	rc = p.client()
	if found, missing := readDurable(ctx, t, rc); missing != 0 {
		t.Fatalf("after repair and restart: %d durable keys found, %d missing", found, missing)
	}

	// 4. The device drops writes and says they succeeded.
	dm.swap(t, dm.flakey("1 drop_writes"))
	for i := 0; i < 50; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("dropped:%d", i), value(i, 1024), 0).Err(); err != nil {
			t.Fatalf("drop_writes: SET dropped:%d: %v (the device reports success)", i, err)
		}
	}
	rc.Close()
	p.kill()
	dm.swap(t, linear)
	p = start(t, cfg, socket)
	rc = p.client()
	defer rc.Close()
	if found, missing := readDurable(ctx, t, rc); missing != 0 {
		t.Fatalf("after dropped writes and a restart: %d durable keys found, %d missing", found, missing)
	}
	back := 0
	for i := 0; i < 50; i++ {
		v, err := rc.Get(ctx, fmt.Sprintf("dropped:%d", i)).Bytes()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			t.Fatalf("GET dropped:%d: %v", i, err)
		case !bytes.Equal(v, value(i, 1024)):
			t.Fatalf("GET dropped:%d: %d bytes, not the value SET", i, len(v))
		default:
			back++
		}
	}
	tiers = info(t, rc, "tiers")
	t.Logf("drop_writes: %d of 50 acknowledged SETs whose writes the device dropped read back after the restart (none torn or foreign); cold_errors %s",
		back, tiers["cold_errors"])
	p.stop()
}

// readsFail runs while cold reads fail and writes work: 50 SETs of keys
// prefix:i succeed, and reading every durable key finds misses, each
// counted in cold_errors, while the store still takes writes.
func readsFail(ctx context.Context, t *testing.T, rc *redis.Client, prefix, what string) {
	t.Helper()
	coldErrs := infoInt(t, info(t, rc, "tiers"), "cold_errors")
	for i := 0; i < 50; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("%s:%d", prefix, i), value(i, 1024), 0).Err(); err != nil {
			t.Fatalf("%s: SET %s:%d: %v (writes work)", what, prefix, i, err)
		}
	}
	found, missing := readDurable(ctx, t, rc)
	tiers := info(t, rc, "tiers")
	grew := infoInt(t, tiers, "cold_errors") - coldErrs
	t.Logf("%s: 50 SETs succeeded; %d durable keys served, %d misses; cold_errors +%d, cold_writable %s",
		what, found, missing, grew, tiers["cold_writable"])
	if missing == 0 || grew < int64(missing) || tiers["cold_writable"] != "1" {
		t.Errorf("%s: %d misses, cold_errors +%d, cold_writable %s; want misses, each counted, and writes still taken",
			what, missing, grew, tiers["cold_writable"])
	}
}

// readsWorkAgain: once reads work again every durable key, and every key
// prefix:i SET while they failed, reads its value (a failed read forgets
// nothing).
func readsWorkAgain(ctx context.Context, t *testing.T, rc *redis.Client, prefix string) {
	t.Helper()
	if found, missing := readDurable(ctx, t, rc); missing != 0 {
		t.Errorf("reads work again: %d durable keys found, %d missing (a failed read forgot its key)", found, missing)
	}
	for i := 0; i < 50; i++ {
		if v, err := rc.Get(ctx, fmt.Sprintf("%s:%d", prefix, i)).Bytes(); err != nil || !bytes.Equal(v, value(i, 1024)) {
			t.Fatalf("reads work again: GET %s:%d (SET while reads failed): %d bytes, %v", prefix, i, len(v), err)
		}
	}
}

// term sends SIGTERM and returns the exit status; the test fails if the
// sidecar is still running after wait.
func (p *proc) term(wait time.Duration) int {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(wait):
		p.t.Fatalf("tiercache did not exit within %v of SIGTERM\n%s", wait, p.out.String())
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// kill ends the sidecar with SIGKILL (a device that fails makes a clean
// stop's final sync fail; the next start recovers by scanning).
func (p *proc) kill() {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// TestSidecarColdDeviceStall: the cold device stops completing I/O (the dm
// device suspended: new I/O waits until it is resumed) under a sidecar in
// cache mode while a writer pushes big values through warm into cold.
// Other clients' PINGs and GETs of hot keys keep being answered; once the
// device is resumed the writer finishes and every key it SET reads its
// value or, pushed out and dropped while the device stalled, nil.
func TestSidecarColdDeviceStall(t *testing.T) {
	requireGuest(t)
	dir := t.TempDir()
	dm := newFaultDisk(t, dir, "tcstall")
	socket := "/tmp/tc-stall.sock"
	cfg := filepath.Join(dir, "tiercache.yaml")
	conf := strings.Replace(faultConfig(dir, socket, dm.node), "durability: writethrough", "durability: cache", 1)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := start(t, cfg, socket)
	rc := p.client()
	defer rc.Close()
	for i := 0; i < 100; i++ {
		if err := rc.Set(ctx, faultKey(false, i), value(i, 1024), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dm.ioctl(dmSuspend, dmSuspendFlag, nil); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			dm.ioctl(dmSuspend, 0, nil)
		}
	}()
	writer := p.client()
	defer writer.Close()
	wrote := make(chan int, 1)
	go func() {
		n := 0
		for i := 0; i < 64; i++ {
			if writer.Set(ctx, faultKey(true, i), value(i, faultBigSize), 0).Err() == nil {
				n++
			}
		}
		wrote <- n
	}()
	var worst time.Duration
	answered := 0
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		t0 := time.Now()
		if err := rc.Ping(ctx).Err(); err != nil {
			t.Fatalf("device stalled: PING: %v", err)
		}
		i := answered % 100
		v, err := rc.Get(ctx, faultKey(false, i)).Bytes()
		if err != nil || !bytes.Equal(v, value(i, 1024)) {
			t.Fatalf("device stalled: GET %s: %d bytes, %v", faultKey(false, i), len(v), err)
		}
		worst = max(worst, time.Since(t0))
		answered++
	}
	tiers := info(t, rc, "tiers")
	t.Logf("device stalled 15 s: %d PING+GET pairs answered, the slowest in %v; flusher_queue %s, cold_oldest_io_ms %s, demote_waits %s",
		answered, worst.Round(time.Millisecond), tiers["flusher_queue"], tiers["cold_oldest_io_ms"], tiers["demote_waits"])
	if _, err := dm.ioctl(dmSuspend, 0, nil); err != nil {
		t.Fatal(err)
	}
	resumed = true
	var n int
	select {
	case n = <-wrote:
	case <-time.After(90 * time.Second):
		t.Fatalf("the writer had not finished 90 s after the device was resumed")
	}
	back := 0
	for i := 0; i < 64; i++ {
		v, err := rc.Get(ctx, faultKey(true, i)).Bytes()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			t.Fatalf("GET %s: %v", faultKey(true, i), err)
		case !bytes.Equal(v, value(i, faultBigSize)):
			t.Fatalf("GET %s: not the value SET", faultKey(true, i))
		default:
			back++
		}
	}
	tiers = info(t, rc, "tiers")
	t.Logf("device resumed: %d of 64 big SETs acknowledged, %d read back; lost %s, flusher_drops %s",
		n, back, tiers["lost"], tiers["flusher_drops"])
	p.stop()
}
