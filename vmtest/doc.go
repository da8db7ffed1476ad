// Package vmtest runs tiercache's guest tests inside a QEMU virtual machine
// that has what this project's machines lack: a real NVMe controller driven
// by the Linux NVMe driver (emulated by QEMU, reached through
// /dev/nvme0, /dev/nvme0n1 and the generic char device /dev/ng0n1 that
// io_uring passthrough uses) and a memory-only NUMA node 1 (how Linux
// presents CXL type-3 memory).
//
// scripts/vmtest (also run by scripts/test through scripts/test.d/50-vm) is
// the one command: it installs qemu-system-x86 and linux-image-amd64 when
// missing, then cmd/vmrun calls Run, which
//
//   - builds ./vmtest/guestinit and every package under ./vmtest/guest/...
//     as static binaries (CGO_ENABLED=0, go test -c);
//   - packs them, the NVMe kernel modules of the guest kernel (with their
//     modules.dep dependencies, decompressed on the host) and a JSON
//     GuestConfig into a newc cpio initramfs written in Go (CPIOWriter);
//   - boots qemu-system-x86_64 -accel tcg (KVM hangs on these machines)
//     with node 0 = CPUs + memory, node 1 = memory only, and one NVMe
//     controller on a sparse temporary raw image;
//   - the guest init mounts proc, sysfs, devtmpfs, tmpfs on /tmp and /run,
//     loads the modules with finit_module, waits for the NVMe devices, runs
//     each test binary with -test.v and TIERCACHE_GUEST=1
//     TIERCACHE_NO_SKIP=1, prints marker lines ("@@vmtest begin/end/done")
//     on the serial console and powers off;
//   - the host streams the console, parses the binaries' own output
//     (Report) and prints one go-test summary line per binary.
//
// The guest test packages (vmtest/guest/...) skip outside the guest
// (TIERCACHE_GUEST unset), so plain `go test ./...` on the host only
// compiles them.
//
// # Invariants
//
// V1: a guest binary counts as passed only if its begin and end markers
// were seen, it exited 0, it printed a final "PASS", at least one test
// passed, and no "--- FAIL" and no "--- SKIP" line appeared (nothing may
// skip in the guest).
// V2: Run returns nil only if the guest booted, the init reported no error,
// every packed binary passed (V1) and the done marker arrived.
// V3: QEMU never runs longer than Options.Timeout; after it the process is
// killed and Run wraps ErrTimeout.
// V4: QEMU runs with -accel tcg, never KVM.
// V5: kernel modules are loaded after all their modules.dep dependencies,
// each once; modules built into the kernel are left out.
// V6: the initramfs is a valid newc archive: every header 4-byte aligned,
// names NUL-terminated, data padded to 4, ended by TRAILER!!!.
// V7: for every guest binary the host prints exactly one line starting
// "ok  \t<import path>" or "FAIL\t<import path>", then "vmtest: N passed,
// N failed".
// V8: without QEMU or a guest kernel, scripts/vmtest prints a "skipped"
// line and exits 0, unless TIERCACHE_NO_SKIP=1, when it exits 1.
//
// # Caveats
//
// TCG is slow (a guest CPU runs some 10-50x slower than the host): guest
// tests keep their data small. The guest kernel is whatever
// linux-image-amd64 installs (Debian 12: 6.1), not the host's kernel; the
// io_uring features the tests use must exist in 6.1. QEMU's NVMe device
// implements the NVM command set, not KV: KV opcodes are only checked for
// refusal. Kernel messages are silenced (printk level 1) so they do not
// split test output lines, but a late kernel oops can still interleave.
package vmtest
