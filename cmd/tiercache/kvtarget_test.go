package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestKVTargetFlags: missing -store, a bad -listen and stray arguments
// are reported together, exit status 1.
func TestKVTargetFlags(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"kvtarget", "-listen", "nowhere", "extra"}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{"-store is required", `-listen "nowhere"`, "unexpected arguments"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q lacks %q", errb.String(), want)
		}
	}
}

// TestKVTargetServes runs `tiercache kvtarget` as a process: it answers an
// NVMe/TCP ICReq with a valid ICResp on the address it prints, and exits 0
// on SIGINT with its store closed (the second round opens it again).
func TestKVTargetServes(t *testing.T) {
	store := t.TempDir() + "/kv.img"
	re := regexp.MustCompile(`on (127\.0\.0\.1:\d+) from`)
	for round := range 2 {
		logf, err := os.CreateTemp(t.TempDir(), "kvtarget-*.log")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), serveEnv+"=kvtarget -listen 127.0.0.1:0 -capacity 64MiB -log-level warn -store "+store)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		output := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
		addr := ""
		for deadline := time.Now().Add(30 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if m := re.FindStringSubmatch(output()); m != nil {
				addr = m[1]
			}
		}
		if addr == "" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: no banner with the listen address:\n%s", round, output())
		}
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		ic := make([]byte, 128)
		ic[2], ic[4] = 128, 128 // ICReq: type 0, HLEN 128, PLEN 128
		nc.Write(ic)
		resp := make([]byte, 128)
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(nc, resp); err != nil || resp[0] != 0x01 || resp[4] != 128 {
			t.Fatalf("round %d: ICResp %x, %v", round, resp[:16], err)
		}
		nc.Close()
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("round %d: exit after SIGINT: %v\n%s", round, err, output())
		}
	}
}
