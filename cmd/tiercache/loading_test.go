package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/tier"
)

// heldOpen is startSidecarOpening's seam for a slow open: it tells opening
// when the open begins and holds it until release is closed (or returns
// fail instead).
func heldOpen(opening, release chan struct{}, fail error) openFunc {
	return func(o tier.Options, _ func(emu.Progress)) (*tier.Cache, error) {
		close(opening)
		<-release
		if fail != nil {
			return nil, fail
		}
		return tier.Open(o)
	}
}

// started is what startSidecarOpening returned, from its goroutine.
type started struct {
	sc  *sidecar
	err error
}

func waitFor(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestLoadingSidecar (C9, S27 end to end): a key written with durability
// drain, then a restart whose open is held back. While it opens, go-redis
// connects (HELLO 3), PING answers PONG, INFO says loading:1, GET answers
// an error that starts with LOADING, and the log says every second how far
// the open got; once it is open, the same connection's GET returns the
// stored value, INFO says loading:0, and the log's last loading line says
// the cold store's index came from the checkpoint.
func TestLoadingSidecar(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Durability = "drain"
	sc, err := startSidecar(cfg, nopLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := newClient(t, sc, 2).Set(ctx, "k", "stored", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}

	cfg = testConfig(t, dir)
	cfg.Durability = "drain"
	core, logs := observer.New(zapcore.InfoLevel)
	opening, release := make(chan struct{}), make(chan struct{})
	res := make(chan started, 1)
	go func() {
		sc, err := startSidecarOpening(cfg, zap.New(core), heldOpen(opening, release, nil))
		res <- started{sc, err}
	}()
	waitFor(t, "the open to begin", opening)
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: cfg.Server.Socket, Protocol: 3, MaxRetries: -1})
	defer rc.Close()
	if v, err := rc.Ping(ctx).Result(); err != nil || v != "PONG" {
		t.Errorf("PING while loading: %q %v", v, err)
	}
	if info, err := rc.Info(ctx, "persistence").Result(); err != nil || !strings.Contains(info, "loading:1\r\n") ||
		!strings.Contains(info, "loading_loaded_perc:") {
		t.Errorf("INFO persistence while loading: %v\n%s", err, info)
	}
	if v, err := rc.Get(ctx, "k").Result(); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
		t.Errorf("GET while loading: %q %v, want an error starting LOADING", v, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for logs.FilterMessage("loading: opening the cache").Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if logs.FilterMessage("loading: opening the cache").Len() == 0 {
		t.Errorf("no progress line in the log after %v of loading", 10*time.Second)
	}
	close(release)
	r := <-res
	if r.err != nil {
		t.Fatalf("start: %v", r.err)
	}
	defer r.sc.Close()
	if v, err := rc.Get(ctx, "k").Result(); err != nil || v != "stored" {
		t.Errorf("GET once open: %q %v", v, err)
	}
	if info, err := rc.Info(ctx, "persistence").Result(); err != nil || !strings.Contains(info, "loading:0\r\n") {
		t.Errorf("INFO persistence once open: %v\n%s", err, info)
	}
	done := logs.FilterMessage("loading: cache open").All()
	if len(done) != 1 || done[0].ContextMap()["method"] != "checkpoint" || done[0].ContextMap()["percent"] != 100.0 {
		t.Errorf("last loading line: %+v, want one, method checkpoint, 100%%", done)
	}
	for _, e := range logs.FilterMessage("loading: opening the cache").All() {
		t.Logf("%s %v", e.Message, e.ContextMap())
	}
	t.Logf("%s %v", done[0].Message, done[0].ContextMap())
}

// TestLoadingOpenFails (C9): when the open fails after a client connected,
// startSidecar returns openCacheError's error and the client's connection
// is closed.
func TestLoadingOpenFails(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	opening, release := make(chan struct{}), make(chan struct{})
	disk := errors.New("disk on fire")
	res := make(chan started, 1)
	go func() {
		sc, err := startSidecarOpening(cfg, nopLogger(), heldOpen(opening, release, disk))
		res <- started{sc, err}
	}()
	waitFor(t, "the open to begin", opening)
	nc, err := net.Dial("unix", cfg.Server.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(nc)
	nc.Write([]byte("PING\r\n"))
	if line, err := br.ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING while loading: %q %v", line, err)
	}
	close(release)
	r := <-res
	if r.err == nil {
		r.sc.Close()
		t.Fatal("the open failed and the sidecar started")
	}
	if !errors.Is(r.err, disk) || r.err.Error() != openCacheError(disk).Error() {
		t.Errorf("start: %v, want %v", r.err, openCacheError(disk))
	}
	if line, err := br.ReadString('\n'); err == nil {
		t.Errorf("connection still open after the failed open: read %q", line)
	}
}
