package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestProbe (C16): while the cache opens, probe live passes and probe
// ready fails saying loading:1; once open both pass; with nothing
// listening both fail, exit 1; over TCP the probe AUTHs; bad usage exits 2.
func TestProbe(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Server.TCP, cfg.Server.RequirePass = "127.0.0.1:0", "pw"
	opening, release := make(chan struct{}), make(chan struct{})
	res := make(chan started, 1)
	go func() {
		sc, err := startSidecarOpening(cfg, nopLogger(), heldOpen(opening, release, nil))
		res <- started{sc, err}
	}()
	waitFor(t, "the open to begin", opening)
	probeRC := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		rc := run(append([]string{"probe", "-socket", cfg.Server.Socket}, args...), &out, &errOut)
		return rc, out.String() + errOut.String()
	}
	if rc, out := probeRC("live"); rc != 0 || !strings.Contains(out, "live: PONG") {
		t.Errorf("probe live while loading: rc %d %q, want 0", rc, out)
	}
	if rc, out := probeRC("ready"); rc != 1 || !strings.Contains(out, "loading:1") {
		t.Errorf("probe ready while loading: rc %d %q, want 1 saying loading:1", rc, out)
	}
	close(release)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.sc.Close()
	for _, what := range []string{"live", "ready"} {
		if rc, out := probeRC(what); rc != 0 {
			t.Errorf("probe %s once open: rc %d %q, want 0", what, rc, out)
		}
	}
	var tcp string
	for _, a := range r.sc.srv.Addrs() {
		if a.Network() == "tcp" {
			tcp = a.String()
		}
	}
	tcfg := defaultConfig()
	tcfg.Server.Socket, tcfg.Server.TCP, tcfg.Server.RequirePass = "", tcp, "pw"
	if msg, err := probe(&tcfg, "ready", 5e9); err != nil || !strings.Contains(msg, "tcp:"+tcp) {
		t.Errorf("probe ready over TCP with AUTH: %q %v", msg, err)
	}
	tcfg.Server.RequirePass = "wrong"
	if _, err := probe(&tcfg, "live", 5e9); err == nil || !strings.Contains(err.Error(), "AUTH") {
		t.Errorf("probe with a wrong password: %v, want an AUTH error", err)
	}

	var out, errOut bytes.Buffer
	if rc := run([]string{"probe", "-socket", shortSocket(t), "live"}, &out, &errOut); rc != 1 ||
		!strings.Contains(errOut.String(), "tiercache probe live: dial unix") {
		t.Errorf("probe live with nothing listening: rc %d %q, want 1", rc, errOut.String())
	}
	for _, args := range [][]string{{"probe"}, {"probe", "alive"}, {"probe", "-bogus", "live"}} {
		if rc := run(args, &out, &errOut); rc != 2 {
			t.Errorf("%q: rc %d, want 2", args, rc)
		}
	}
}

// TestMetricsPortTakenLeavesNoSocket (C15): with metrics.listen taken the
// sidecar exits 1 and its RESP socket was never created.
func TestMetricsPortTakenLeavesNoSocket(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sock := shortSocket(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=serve -socket "+sock+" -log-level warn -data "+t.TempDir()+" -metrics "+l.Addr().String())
	p := spawn(t, cmd)
	if code := p.exitOf(t); code != 1 || !strings.Contains(p.output(), "metrics.listen "+l.Addr().String()+": the address is in use") {
		t.Errorf("exit %d: %s", code, p.output())
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the RESP socket %s exists after the metrics listener failed (%v)", sock, err)
	}
}
