package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKVTargetFlags: missing -store, a bad -listen and stray arguments
// are reported together, exit status 1; so are a listen address that is
// not loopback without a secret for every host, a hosts file with a bad
// secret or readable by others, and an unknown DH group (C21).
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
	dir := t.TempDir()
	hosts := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const key = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-dir", dir, "-store", dir + "/x"}, []string{"-store is required, or -dir"}},
		{[]string{"-dir", dir, "-listen", "0.0.0.0:4420"}, []string{"-listen 0.0.0.0:4420 is not a loopback address", "-hosts FILE"}},
		{[]string{"-dir", dir, "-listen", "0.0.0.0:4420", "-hosts", hosts("nokey", "nqn.2014-08.org.nvmexpress:uuid:a\n", 0o600)}, []string{"not a loopback address"}},
		{[]string{"-dir", dir, "-hosts", hosts("badkey", "nqn.2014-08.org.nvmexpress:uuid:a DHHC-1:00:AAAA:\n", 0o600)}, []string{"line 1", "invalid DH-HMAC-CHAP secret"}},
		{[]string{"-dir", dir, "-hosts", hosts("open", "nqn.2014-08.org.nvmexpress:uuid:a "+key+"\n", 0o644)}, []string{"readable by group or others", "chmod 600"}},
		{[]string{"-dir", dir, "-hosts", hosts("empty", "# nobody\n", 0o600)}, []string{"lists no host"}},
		{[]string{"-dir", dir, "-dhchap-groups", "ffdhe1024"}, []string{`DH group "ffdhe1024"`}},
	} {
		errb.Reset()
		if code := run(append([]string{"kvtarget"}, tc.args...), &out, &errb); code != 1 {
			t.Errorf("%v: exit %d, want 1", tc.args, code)
		}
		for _, want := range tc.want {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errb.String(), want)
			}
		}
		if strings.Contains(errb.String(), "AAECAwQF") {
			t.Errorf("%v: stderr repeats a secret: %q", tc.args, errb.String())
		}
	}
}

// TestKVTargetServes runs `tiercache kvtarget` as a process: it answers an
// NVMe/TCP ICReq with a valid ICResp on the address it prints, and exits 0
// on SIGINT with its store closed (the second round opens it again).
func TestKVTargetServes(t *testing.T) {
	store := t.TempDir() + "/kv.img"
	for round := range 2 {
		addr, stop := startKVTarget(t, "-capacity 64MiB -store "+store)
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
		stop()
	}
}
