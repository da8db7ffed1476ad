package sidecar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestSidecarColdDeviceFull: the cold store on a block device that runs
// out of space under the running sidecar (writethrough): a 128 MiB thin
// device over a pool of 24 MiB with error_if_no_space, so the write that
// needs a block the pool does not have fails with ENOSPC, as a thin LUN or
// an overcommitted volume would. SETs succeed until then; from then on
// every SET answers an error naming ENOSPC and stores nothing (the SET's
// key reads nil); INFO and /metrics show the store read-only and the
// error; PING and every acknowledged key keep being served; and after a
// restart on the still full device every acknowledged key reads its value.
func TestSidecarColdDeviceFull(t *testing.T) {
	requireGuest(t)
	dir := t.TempDir()
	thin := newThinDisk(t, dir, 24<<20, faultDiskBytes)
	t.Logf("cold store on %s (dm thin, 128 MiB over a 24 MiB pool)", thin.node)
	socket := "/tmp/tc-full.sock"
	cfg := filepath.Join(dir, "tiercache.yaml")
	if err := os.WriteFile(cfg, []byte(faultConfig(dir, socket, thin.node)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := start(t, cfg, socket)
	rc := p.client()
	key := func(i int) string { return fmt.Sprintf("fill:%d", i) }
	const size = 256 << 10
	acked, refused := 0, 0
	var setErr error
	for i := 0; i < 200 && refused < 20; i++ {
		if err := rc.Set(ctx, key(i), value(i, size), 0).Err(); err != nil {
			if refused == 0 {
				setErr = err
			}
			refused++
			continue
		}
		if refused > 0 {
			t.Fatalf("SET %s succeeded after %d SETs had answered an error (%v): the store takes writes again", key(i), refused, setErr)
		}
		acked++
	}
	t.Logf("device full: %d SETs of 256 KiB acknowledged, then %d answered %q", acked, refused, setErr)
	if acked < 20 || refused == 0 {
		t.Fatalf("device full: %d SETs acknowledged, %d refused; want the pool (24 MiB) to fill and the SETs after it refused", acked, refused)
	}
	if !strings.Contains(setErr.Error(), "no space left on device") {
		t.Errorf("the SET error %q does not name ENOSPC", setErr)
	}
	tiers := info(t, rc, "tiers")
	if tiers["cold_writable"] != "0" || !strings.Contains(tiers["cold_write_error"], "no space left on device") {
		t.Errorf("device full: cold_writable %q, cold_write_error %q; want 0 and the ENOSPC", tiers["cold_writable"], tiers["cold_write_error"])
	}
	if m := scrape(t, "tiercache_cold_writable"); len(m) != 1 || m[0] != "tiercache_cold_writable 0" {
		t.Errorf("device full: /metrics has %q", m)
	}
	if err := rc.Ping(ctx).Err(); err != nil {
		t.Fatalf("device full: PING: %v", err)
	}
	check := func(when string) {
		t.Helper()
		for i := 0; i < acked+refused; i++ {
			v, err := rc.Get(ctx, key(i)).Bytes()
			switch {
			case i >= acked && errors.Is(err, redis.Nil):
			case i >= acked:
				t.Fatalf("%s: GET %s, whose SET answered an error: %d bytes, %v; want nil", when, key(i), len(v), err)
			case err != nil || !bytes.Equal(v, value(i, size)):
				t.Fatalf("%s: GET %s (acknowledged): %d bytes, %v", when, key(i), len(v), err)
			}
		}
	}
	check("device full")
	t.Logf("device full: flusher_errors %s, cold_errors %s, lost %s", tiers["flusher_errors"], tiers["cold_errors"], tiers["lost"])
	rc.Close()
	code := p.term(time.Minute)
	out := p.out.String()
	if i := strings.LastIndex(out, `"msg":"shutdown"`); i >= 0 {
		out = out[i:]
	}
	t.Logf("device full: SIGTERM: exit %d; %.300s", code, out)

	p = start(t, cfg, socket)
	rc = p.client()
	defer rc.Close()
	check("restarted on the full device")
	err := rc.Set(ctx, key(acked+refused), value(0, size), 0).Err()
	t.Logf("restarted on the full device: every acknowledged key reads its value; a new SET answers %v", err)
	p.kill()
}
