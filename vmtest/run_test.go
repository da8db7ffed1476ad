package vmtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeQEMU writes an executable shell script standing in for QEMU.
func fakeQEMU(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "qemu")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunQEMUStreamsAndParses(t *testing.T) {
	q := fakeQEMU(t, `printf 'SeaBIOS\r\n@@vmtest boot kernel=k\r\n@@vmtest begin a p/a\r\n--- PASS: TestX (0.00s)\r\nPASS\r\n@@vmtest end a exit=0 elapsed=1s\r\n@@vmtest done\r\n'`)
	var out strings.Builder
	o := Options{Stdout: &out, Timeout: time.Minute}
	o.EnsureDefaults()
	rep := NewReport([]GuestTest{{Name: "a", Pkg: "p/a"}})
	if err := runQEMU(context.Background(), &o, q, nil, rep); err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "--- PASS: TestX") || strings.Contains(out.String(), "\r") {
		t.Fatalf("console not streamed line by line without CR:\n%q", out.String())
	}
}

// TestRunQEMUHardTimeout: a guest that never powers off is killed (V3).
func TestRunQEMUHardTimeout(t *testing.T) {
	q := fakeQEMU(t, "echo '@@vmtest boot kernel=k'\nexec sleep 600\n")
	var out strings.Builder
	o := Options{Stdout: &out, Timeout: 500 * time.Millisecond}
	o.EnsureDefaults()
	rep := NewReport([]GuestTest{{Name: "a", Pkg: "p/a"}})
	err := runQEMU(context.Background(), &o, q, nil, rep)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("runQEMU = %v, want ErrTimeout", err)
	}
	if !rep.Booted || rep.Err() == nil {
		t.Fatalf("report after a hang: booted %v, err %v", rep.Booted, rep.Err())
	}
}

func TestRunSkipsWithoutQEMU(t *testing.T) {
	_, err := Run(context.Background(), Options{QEMU: "no-such-qemu-binary", Stdout: &strings.Builder{}})
	if !errors.Is(err, ErrSkip) || !strings.Contains(err.Error(), "qemu-system-x86") {
		t.Fatalf("Run without QEMU = %v, want ErrSkip naming the package", err)
	}
}
