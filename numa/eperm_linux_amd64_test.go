//go:build linux && amd64

package numa

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denyPolicySyscalls installs a seccomp filter on every thread of this
// process that fails mbind, set_mempolicy, get_mempolicy and move_pages with
// EPERM, as the default container seccomp profile does without
// CAP_SYS_NICE. Classic BPF over struct seccomp_data (nr at 0, arch at 4),
// include/uapi/linux/seccomp.h and filter.h.
func denyPolicySyscalls() error {
	const (
		ldAbsW = 0x20 // BPF_LD|BPF_W|BPF_ABS
		jeqK   = 0x15 // BPF_JMP|BPF_JEQ|BPF_K
		retK   = 0x06 // BPF_RET|BPF_K
	)
	deny := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	prog := []unix.SockFilter{
		{Code: ldAbsW, K: 4},
		{Code: jeqK, Jt: 1, K: unix.AUDIT_ARCH_X86_64},
		{Code: retK, K: unix.SECCOMP_RET_ALLOW},
		{Code: ldAbsW, K: 0},
		{Code: jeqK, Jt: 4, K: unix.SYS_MBIND},
		{Code: jeqK, Jt: 3, K: unix.SYS_SET_MEMPOLICY},
		{Code: jeqK, Jt: 2, K: unix.SYS_GET_MEMPOLICY},
		{Code: jeqK, Jt: 1, K: unix.SYS_MOVE_PAGES},
		{Code: retK, K: unix.SECCOMP_RET_ALLOW},
		{Code: retK, K: deny},
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return e
	}
	return nil
}

func init() { epermChild = runEPERMChild }

// TestEPERMClearMessage re-runs this test binary as a child whose policy
// syscalls fail with EPERM (a seccomp filter cannot be removed again); the
// child (TestMain -> runEPERMChild) checks the errors and fallbacks.
func TestEPERMClearMessage(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TIERCACHE_NUMA_EPERM_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "eperm child: ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child:\n%s", out)
}

// runEPERMChild returns the process exit code: 0 when every check holds.
func runEPERMChild() int {
	if err := checkEPERM(); err != nil {
		fmt.Println("eperm child: FAIL:", err)
		return 1
	}
	fmt.Println("eperm child: ok")
	return 0
}

func checkEPERM() error {
	if err := denyPolicySyscalls(); err != nil {
		return fmt.Errorf("cannot install a seccomp filter: %w", err)
	}
	for _, mode := range []Mode{ModeRange, ModeThread} {
		_, err := NewArena(ArenaOptions{Bytes: 1 << 20, Node: 0, Mode: mode})
		call := map[Mode]string{ModeRange: "mbind", ModeThread: "set_mempolicy"}[mode]
		if !errors.Is(err, ErrPermission) || !errors.Is(err, unix.EPERM) || !strings.Contains(err.Error(), "CAP_SYS_NICE") ||
			!strings.Contains(err.Error(), call) {
			return fmt.Errorf("strict, %s, under EPERM: %v", mode, err)
		}
		fmt.Printf("strict %s: %v\n", mode, err)
	}
	a, err := NewArena(ArenaOptions{Bytes: 1 << 20, Node: 0, Fallback: FallbackPreferred})
	if err != nil {
		return fmt.Errorf("preferred fallback under EPERM: %v", err)
	}
	defer a.Close()
	if _, ok := a.Bound(); ok || !errors.Is(a.FallbackErr(), ErrPermission) {
		return fmt.Errorf("preferred fallback: bound=%v FallbackErr=%v", ok, a.FallbackErr())
	}
	if _, err := a.Placement(8); !errors.Is(err, ErrPermission) {
		return fmt.Errorf("Placement under EPERM: %v", err)
	}
	a.Bytes()[0] = 1 // the unbound arena works
	return nil
}
