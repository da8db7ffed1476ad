package uring

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

func TestUnavailableErrorText(t *testing.T) {
	cases := []struct {
		errno  syscall.Errno
		sysctl string
		want   string
	}{
		{syscall.ENOSYS, "", "does not exist (ENOSYS)"},
		{syscall.EPERM, "2", "kernel.io_uring_disabled=2"},
		{syscall.EPERM, "1", "kernel.io_uring_disabled=1"},
		{syscall.EPERM, "0", "seccomp"},
		{syscall.EPERM, "", "seccomp"},
	}
	for _, tc := range cases {
		err := unavailableError(tc.errno, tc.sysctl)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, tc.errno) {
			t.Errorf("%v/%q: %v does not wrap ErrUnavailable and the errno", tc.errno, tc.sysctl, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "uring: io_uring is unavailable: ") || strings.Count(msg, ". ") > 0 {
			t.Errorf("%v/%q: message %q: want one sentence mentioning %q", tc.errno, tc.sysctl, msg, tc.want)
		}
	}
	// Other setup failures are not "unavailable".
	if err := setupError(syscall.EINVAL, setupSQE128); errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("setupError(EINVAL) = %v", err)
	}
}

// seccompChildEnv makes the test binary act as the child of
// TestUnavailableSeccomp (see TestMain).
const seccompChildEnv = "TIERCACHE_URING_SECCOMP_CHILD"

// seccompChild runs in a re-executed test binary: it forbids io_uring_setup
// with EPERM via seccomp (all threads) and prints what New says.
func seccompChild() int {
	if err := denyIOUringSetup(); err != nil {
		fmt.Println("SECCOMP-FAILED:", err)
		return 2
	}
	r, err := New(Options{})
	if err == nil {
		r.Close()
		fmt.Println("NEW-SUCCEEDED")
		return 1
	}
	fmt.Printf("UNAVAILABLE=%v\nERR=%s\n", errors.Is(err, ErrUnavailable), err)
	return 0
}

// TestUnavailableSeccomp: with io_uring_setup blocked by a seccomp filter
// (as container runtimes do), New fails with ErrUnavailable and says so.
func TestUnavailableSeccomp(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), seccompChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "SECCOMP-FAILED") {
		skipOrFail(t, "cannot install a seccomp filter here: %s", out)
	}
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "UNAVAILABLE=true") || !strings.Contains(string(out), "seccomp") {
		t.Fatalf("child output %q: want ErrUnavailable mentioning seccomp", out)
	}
	t.Logf("%s", out)
}
