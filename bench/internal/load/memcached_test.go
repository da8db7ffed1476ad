package load

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// skipf skips with reason, or fails when TIERCACHE_NO_SKIP=1 (CI as root).
func skipf(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format+" (TIERCACHE_NO_SKIP=1)", args...)
	}
	t.Skipf(format, args...)
}

// startMemcached runs Debian's memcached on a Unix socket with extstore on
// a file, as scripts/bench-embedding does, until the test ends.
func startMemcached(t *testing.T) string {
	bin, err := exec.LookPath("memcached")
	if err != nil {
		skipf(t, "memcached is not installed (apt-get install memcached)")
	}
	dir, err := os.MkdirTemp("", "mc") // a short path: sun_path holds 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "mc.sock")
	args := []string{"-s", sock, "-a", "0700", "-m", "64", "-o", "ext_path=" + filepath.Join(dir, "ext") + ":128m"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			return sock
		}
		if i == 100 {
			t.Fatal("memcached did not create its socket in 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dialMemcache is one memcached connection on sock, closed when the test ends.
func dialMemcache(t *testing.T, sock string) Conn {
	d, err := NewDialer("memcache", sock, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestMemcachedGetMany: a get of several keys against a real memcached
// answers hits and misses in the order asked, a key asked twice twice.
func TestMemcachedGetMany(t *testing.T) {
	c := dialMemcache(t, startMemcached(t))
	ctx := context.Background()
	var keys []string
	var vals [][]byte
	for i := range 300 {
		keys = append(keys, Key("emb:", i))
		v := make([]byte, 1536)
		Fill(v, i, 1)
		vals = append(vals, v)
	}
	if err := c.SetMany(ctx, keys, vals); err != nil {
		t.Fatal(err)
	}
	ask := []string{Key("emb:", 7), "absent", Key("emb:", 299), Key("emb:", 7), "absent2"}
	for i := range 256 - len(ask) {
		ask = append(ask, Key("emb:", i))
	}
	got, err := c.GetMany(ctx, ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ask) {
		t.Fatalf("%d answers for %d keys", len(got), len(ask))
	}
	for j, k := range ask {
		var i int
		if _, err := fmt.Sscanf(k, "emb:%d", &i); err != nil {
			if got[j] != nil {
				t.Errorf("%s, never set: %T", k, got[j])
			}
			continue
		}
		s, ok := got[j].(string)
		if !ok {
			t.Errorf("%s (asked at %d): a miss", k, j)
			continue
		}
		if ver, _, err := Check([]byte(s), i, 1536, nil); err != nil || ver != 1 {
			t.Errorf("%s: version %d, %v", k, ver, err)
		}
	}
	if v, ok, err := c.Get(ctx, nil, Key("emb:", 3)); err != nil || !ok || len(v) != 1536 {
		t.Errorf("get after a get of several keys: %d bytes, %v, %v", len(v), ok, err)
	}
}
