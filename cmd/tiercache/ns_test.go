package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv/dhchap"
)

// startKVTarget runs `tiercache kvtarget args...` as a process and returns
// the address it serves and its stop: SIGINT, then exit status 0 is
// required (at cleanup if the test did not stop it).
func startKVTarget(t *testing.T, args string) (string, func()) {
	t.Helper()
	logf, err := os.CreateTemp(t.TempDir(), "kvtarget-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=kvtarget -listen 127.0.0.1:0 -log-level warn "+args)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	output := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			if err := cmd.Wait(); err != nil {
				t.Errorf("kvtarget exit after SIGINT: %v\n%s", err, output())
			}
		})
	}
	t.Cleanup(stop)
	re := regexp.MustCompile(` on (127\.0\.0\.1:\d+) \(`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(output()); m != nil {
			return m[1], stop
		}
	}
	cmd.Process.Kill()
	t.Fatalf("kvtarget printed no address:\n%s", output())
	return "", nil
}

// TestNSCommand (C21): `tiercache kvtarget -dir` with a -hosts file whose
// host must authenticate, managed with `tiercache ns -connect` as that
// host: create prints the namespace and records it, list shows it as
// created here, a second create of the name finds it again, delete by an
// NSID this host did not create is refused, delete by name removes it;
// without the secret the host is refused; bad flags are reported together.
func TestNSCommand(t *testing.T) {
	dir := t.TempDir()
	const host = "nqn.2014-08.org.nvmexpress:uuid:ns-command"
	key, err := dhchap.GenerateSecret(dhchap.SHA256, nil)
	if err != nil {
		t.Fatal(err)
	}
	hostsFile, secretFile := filepath.Join(dir, "hosts"), filepath.Join(dir, "secret")
	os.WriteFile(hostsFile, []byte("# the test host\n"+host+" "+key.String()+"\n"), 0o600)
	os.WriteFile(secretFile, []byte(key.String()+"\n"), 0o600)
	addr, _ := startKVTarget(t, "-dir "+filepath.Join(dir, "ns")+" -capacity 64MiB -hosts "+hostsFile)
	reg := filepath.Join(dir, "registry.json")
	ns := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		base := []string{"ns", args[0], "-connect", addr, "-nqn", "nqn.2026-12.io.tiercache:kvssd", "-hostnqn", host, "-secret", secretFile, "-registry", reg}
		code := run(append(base, args[1:]...), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := ns("create", "-name", "tenant-a", "-size", "16MiB", "-json")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	var created struct {
		Namespaces []struct {
			Record    struct{ Name, ID string }
			Namespace struct {
				NSID     uint32
				KV       bool
				Size     uint64
				Attached bool
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || len(created.Namespaces) != 1 {
		t.Fatalf("create printed %q (%v)", out, err)
	}
	n := created.Namespaces[0]
	if n.Namespace.NSID != 1 || !n.Namespace.KV || n.Namespace.Size != 16<<20 || !n.Namespace.Attached || !strings.HasPrefix(n.Record.ID, "nguid:") {
		t.Fatalf("created %+v", n)
	}
	if code, out, errs = ns("create", "-name", "tenant-a", "-size", "16MiB"); code != 0 || !strings.Contains(out, n.Record.ID) {
		t.Fatalf("create again: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ = ns("list"); code != 0 || !strings.Contains(out, "tenant-a") || !strings.Contains(out, "created here") || !strings.Contains(out, "unallocated 50331648") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	// Another registry never deletes it.
	var errb bytes.Buffer
	if code := run([]string{"ns", "delete", "-connect", addr, "-nqn", "nqn.2026-12.io.tiercache:kvssd", "-hostnqn", host, "-secret", secretFile,
		"-registry", filepath.Join(dir, "other.json"), "-nsid", "1"}, &bytes.Buffer{}, &errb); code != 1 || !strings.Contains(errb.String(), "not created by this host") {
		t.Fatalf("delete from another registry: exit %d: %s", code, errb.String())
	}
	if code, _, errs = ns("delete", "-name", "tenant-a"); code != 0 {
		t.Fatalf("delete: %s", errs)
	}
	if code, out, _ = ns("list"); code != 0 || strings.Contains(out, "tenant-a") {
		t.Fatalf("list after delete:\n%s", out)
	}
	errb.Reset()
	if code := run([]string{"ns", "list", "-connect", addr, "-nqn", "nqn.2026-12.io.tiercache:kvssd", "-hostnqn", host, "-registry", reg}, &bytes.Buffer{}, &errb); code != 1 || !strings.Contains(errb.String(), "no secret") {
		t.Fatalf("without the secret: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"ns", "create", "-name", "x"}, &bytes.Buffer{}, &errb); code != 1 ||
		!strings.Contains(errb.String(), "-ctrl /dev/nvmeX or -connect") || !strings.Contains(errb.String(), "create needs -name and -size") {
		t.Fatalf("bad flags: exit %d: %s", code, errb.String())
	}
}
