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
//   - packs them, the NVMe, loop and device-mapper kernel modules of the
//     guest kernel (GuestModules: NVMe, nvme-fabrics and nvme-tcp, loop,
//     device-mapper; with their modules.dep dependencies,
//     decompressed on the host) and a JSON
//     GuestConfig into a newc cpio initramfs written in Go (CPIOWriter);
//   - builds the DefaultBinaries (./cmd/tiercache) into /bin of the guest,
//     their paths in $TIERCACHE_BIN_<NAME>, and packs the
//     DefaultHostPrograms (Debian's nvme-cli, /usr/sbin/nvme, which
//     scripts/vmtest installs) with their ELF interpreter and shared
//     libraries at their host paths (HostProgramFiles), in
//     $TIERCACHE_BIN_<NAME> too;
//   - boots qemu-system-x86_64 -accel tcg (KVM hangs on these machines)
//     with node 0 = CPUs + memory, node 1 = memory only, and three NVMe
//     controllers on sparse temporary raw images: nvme0 (serial
//     tiercachevm) for the passthrough tests, nvme1 (tiercachecold) for the
//     sidecar's cold tier, so the suites never see each other's blocks, and
//     nvme2 (tiercachemeta), whose namespace QEMU formats with 8 bytes of
//     metadata and protection information per block (MetadataNamespace),
//     for the NVM backend to refuse;
//   - the guest init mounts proc, sysfs, devtmpfs, tmpfs on /tmp and /run,
//     brings lo up, loads the modules with finit_module (PCI autoprobing
//     off, then binds the NVMe controllers to the driver one at a time in
//     PCI order, so their names follow QEMU's order: the driver probes
//     asynchronously, and with three controllers the names raced), waits
//     for the NVMe devices, runs each test binary with -test.v and TIERCACHE_GUEST=1
//     TIERCACHE_NO_SKIP=1 TIERCACHE_NUMA_NODE=1 TIERCACHE_VM_IMAGE_BYTES,
//     prints marker lines ("@@vmtest begin/end/done") on the serial console
//     (with the last kernel messages when a binary dies from a signal, e.g.
//     the OOM killer) and powers off;
//   - the host streams the console, parses the binaries' own output
//     (Report) and prints one go-test summary line per binary.
//
// Other packages' own tests can run in the guest too, e.g.
// `scripts/vmtest -pkgs ./numa,./uring -bins none -run Arena`; they see
// TIERCACHE_NUMA_NODE=1 and TIERCACHE_NO_SKIP=1 there.
//
// The guest test packages (vmtest/guest/...) skip outside the guest
// (TIERCACHE_GUEST unset), so plain `go test ./...` on the host only
// compiles them:
//
//   - boot: the NVMe devices exist in the expected order, node 1 is
//     memory-only, loopback works;
//   - nvmens: the emulated namespace's log on /dev/ng1n1 through NVM
//     passthrough (nvmekv/emu/dev.NVMe), and its benchmark against the
//     block device /dev/nvme1n1 (V18, V19);
//   - nvmept: passthrough on the real NVMe driver (V9-V12);
//   - numanode: numa, the warm tier and the cold store's index on the
//     CPU-less node (V13-V15, V17, V28);
//   - kvtcp: a software KV SSD (`tiercache kvtarget`) attached through
//     the kernel's nvme-tcp host as /dev/ngXnY, its namespace kept as KV
//     (CSI 1), and nvmekv's conformance suite through NVME_URING_CMD_IO on
//     it (V23, V24); Namespace Management through the kernel's controller
//     and the Namespace Attribute Changed event, checked against nvme-cli
//     (V30); DH-HMAC-CHAP with the kernel's dhchap_secret (V31);
//     BenchmarkKVSSD against the emulated namespace called directly;
//   - sidecar: the tiercache binary with warm on node 1 and cold on
//     /dev/nvme1n1, or on /dev/ng1n1 through NVM passthrough, or on the
//     KV SSD over NVMe/TCP through KV passthrough, through its socket
//     (V16, V20, V25), the crash loop on /dev/ng1n1 (V22), with its
//     cold store on a failing device-mapper device (V21), and with
//     tenants' KV namespaces on the KV SSD (V32).
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
// each once; modules built into the kernel are left out, and so are
// SoftModules the kernel does not ship (6.12 builds t10-pi in, unlisted);
// any other missing name is ErrModuleNotFound
// (TestResolveModulesOrdersDependenciesFirst, TestResolveModulesSoftAbsent).
// V6: the initramfs is a valid newc archive: every header 4-byte aligned,
// names NUL-terminated, data padded to 4, ended by TRAILER!!!.
// V7: for every guest binary the host prints exactly one line starting
// "ok  \t<import path>" or "FAIL\t<import path>", then "vmtest: N passed,
// N failed".
// V8: without QEMU or a guest kernel, scripts/vmtest prints a "skipped"
// line and exits 0, unless TIERCACHE_NO_SKIP=1, when it exits 1.
//
// Guest invariants (checked in the guest by vmtest/guest/...):
//
// V9: Identify Controller and Namespace return the same bytes through
// NVME_URING_CMD_ADMIN on /dev/nvme0 (SQE128|CQE32 ring) and through
// NVME_IOCTL_ADMIN_CMD on /dev/ng0n1; the namespace is CSI 0 and its size
// is the host image's.
// V10: NVM Writes then Reads through NVME_URING_CMD_IO on /dev/ng0n1 return
// the written bytes at QD 1 and QD 32, with plain and with registered
// (IORING_URING_CMD_FIXED) buffers, also for a transfer that covers only
// part of a huge-page registered buffer (Linux >= 6.2; 6.1 refuses it
// with EINVAL, which the test then only logs), and the block device
// (O_DIRECT, READ_FIXED) sees the same bytes; NVM Flush succeeds
// (TestFixedBuffers, TestFixedBufferPartialTransfer).
// V11: a Read beyond the namespace completes with cqe.res = 0x4080, decoded
// as SCT 0, SC 0x80 (LBA Out of Range), DNR, and never as an errno.
// V12: nvmekv.OpenPassthrough refuses the CSI 0 namespace with ErrNotKV
// naming the device and its CSI; opened with AllowNonKV, every KV opcode
// (Store, Retrieve, Delete, Exist, List, Do) fails with ErrNotKV; the
// XXH3-128 of the whole namespace is unchanged afterwards.
// V13: numa.ReadTopology reports nodes 0-1, node 1 CPU-less, and
// CXLCandidates() == [1]; WarmNode() == 1.
// V14: arenas on node 1 with bind, preferred, preferred-many, thread mode,
// AutoNode, and after Rebind from node 0, have every page on node 1
// (move_pages and get_mempolicy agree); bound to node 0 every page is on
// node 0; node 2 fails with ErrNoSuchNode naming node 2 and nodes 0-1.
// V15: the warm tier's log on node 1 (bind/range, preferred/range,
// bind/thread) keeps every page on node 1 after filling, cleaning and
// evicting; range mode with automatic NUMA balancing on, thread mode with
// it off.
// V16: the sidecar binary with warm on node 1 (strict) and the emulated
// cold namespace on /dev/nvme1n1 reports warm node 1 placement 1.0;
// values larger than hot and warm reach cold; every key SET reads back
// equal, before and after a SIGTERM (drain) restart, where the reads come
// from cold.
// V17: with automatic NUMA balancing on (Debian's default with two nodes)
// and node-0 CPUs touching it, a range-mode (mbind) arena keeps every page
// on node 1 through two full balancer passes (mm->numa_scan_seq).
//
// V18: dev.OpenNVMe on /dev/ng1n1 reads the namespace's geometry (512-byte
// blocks, the image's size, a largest transfer from MDTS and the block
// layer's limits; the NVM command set's namespace data, CNS 05h, exactly
// when the controller reports extended LBA formats, and its format
// without metadata, protection or storage tag) and refuses /dev/nvme1n1
// (not a char device);
// unaligned and out-of-range requests are refused with nothing reaching
// the device (no NVMe status seen, while the same Read sent raw gets LBA
// Out of Range); NVM Flush succeeds; Dataset Management deallocates, and
// the deallocated blocks read as zeros (TestNVMeOpenIdentify,
// TestNVMeRefusedBeforeSubmission, TestNVMeFlushAndDeallocate). The
// namespace of nvme2, formatted with metadata and protection information,
// is refused by dev.OpenNVMe and emu.Open with ErrNotNVM naming
// /dev/ng2n1 and its 8 metadata bytes (TestNVMeRefusesMetadataNamespace).
// V19: the emulated namespace on /dev/ng1n1 (plain, IOPOLL read rings,
// SQPOLL main ring) returns every value stored, one at a time and in
// batches, also after a reopen that scans the namespace, with registered
// buffers in use on Linux >= 6.2 (Stats.Fixed; plain addresses before); a
// wrapped log deallocates its reclaimed region; a device read error fails
// the Retrieve with an error naming the device and EIO, a failed NVM Flush
// makes the namespace read-only, its data still readable
// (TestNVMeNamespace, TestNVMeReadErrorIsClear). With the driver's poll
// queue (ModuleParams: nvme poll_queues=1; the namespace's io_poll is 1)
// an IOPoll namespace reads every value on polled rings with registered
// buffers and no interrupt on the controller's I/O queues, while the same
// reads without IOPoll take interrupts (TestNVMeIOPollOnPollQueues).
// V20: the sidecar with cold.backend nvme and cold.iopoll on /dev/ng1n1
// answers SET, GET and MGET batches with what was SET, before and after a
// draining restart, where every read comes from cold
// (TestSidecarColdNVMePassthroughRestart).
// V21: the sidecar (writethrough) with its cold store on a dm device over
// a loop device, the table swapped under it: an error target over the
// full log regions, and dm-flakey error_reads over the whole device (every
// read fails, every write works), fail those cold reads as counted misses
// while SETs succeed; dm-flakey error_writes makes SETs answer the EIO and
// INFO show cold_writable:0 while every durable key reads back and no SET
// that answered the error reads back a value; dm-error serves
// the memory copies and counts the cold misses; after the linear table
// and a restart every durable key reads its value; with drop_writes the
// acknowledged SETs whose writes were dropped read nil or their value,
// never another (TestSidecarColdDeviceFaults). With the device suspended
// (I/O waits) under a cache-mode sidecar that a writer pushes into cold,
// PING and GETs of hot keys are answered, and after the resume every
// acknowledged SET reads its value or nil (TestSidecarColdDeviceStall).
// V22: the reliability crash loop (cmd/tiercache/crashloop) with the cold
// tier on /dev/ng1n1 through NVM passthrough: in writethrough, after each
// of 20 SIGKILLs at random moments under load, no acknowledged write is
// lost, no acknowledged delete is back and no value is torn or another
// store's; in drain mode every clean stop comes back exact
// (TestSidecarColdNVMeCrashLoop).
// V23: `tiercache kvtarget` on 127.0.0.1:4420, connected by writing
// transport=tcp,traddr=127.0.0.1,trsvcid=4420,nqn=... to /dev/nvme-fabrics,
// becomes a live tcp controller of that subsystem whose one namespace has
// a char device /dev/ngXnY and no block device; its gendisk in /sys is
// hidden with size 0 (the path for a command set without a block
// driver; 6.1 has no csi attribute, a kernel that has one must say 1); its
// uuid is the target's; nvmekv.OpenPassthrough reads CSI 1 and the
// target's KV format through the kernel (TestAttachKVNamespace).
// V24: nvmekv's conformance suite (nvmekv/kvconform) passes on that
// device through NVME_URING_CMD_IO, the controller still live afterwards
// (TestKVConformanceThroughKernel).
// V25: the sidecar with cold.backend passthrough on that device answers
// SET, GET and MGET batches with what was SET (256 KiB values stored as
// linked chains of chunks, header last), and after a draining restart
// every key comes from cold (TestSidecarColdKVSSDOverTCP).
// V26: kernel.io_uring_disabled for real: set to 2 under a running
// sidecar, its rings keep serving writethrough SETs and cold GETs; at 2 a
// sidecar with a cold tier exits 1 naming the sysctl and cold.backend
// none, and with cold.backend none it serves hot and warm; at 1 an
// unprivileged sidecar is refused naming the sysctl's 1 until
// kernel.io_uring_group is its group, and root's starts
// (TestSidecarIOURingDisabled).
// V27: the cold store on a dm-thin device over a smaller pool
// (error_if_no_space): once the pool is full every SET answers an error
// naming ENOSPC and stores nothing, INFO and /metrics show the store
// read-only, every acknowledged key is served, also after a restart on the
// still full device (TestSidecarColdDeviceFull).
// V28: a cache whose emulated cold store's index is bound to node 1
// (coldstore.Config.IndexNode, the sidecar's cold.index_node), with
// automatic NUMA balancing on, after 120,000 keys reached cold (tag
// segments of the index off the Go heap), reports index node 1, at least
// 1 MiB and nine tenths of the index bound, no bind error and at least 0.99 of its sampled resident pages on
// node 1; with the index node auto and warm on node 1 the index goes to
// node 1 (TestColdIndexOnNode1).
// V29: QEMU runs every guest CPU on one host thread (`-accel
// tcg,thread=single`, TestQEMUArgsUseTCGAndCPULessNode). With one host
// thread per guest CPU (QEMU 7.2's default MTTCG), the guest's Linux 6.12
// once died in can_migrate_task with its RIP one byte into the 5-byte NOP
// of a static branch, right after a numanode test had switched
// kernel.numa_balancing (which flips the sched_numa_balancing static key
// with text_poke_bp, arch/x86/kernel/alternative.c) while the other CPU
// ran the scheduler's load balancer: an emulated CPU executed
// half-patched code. One thread serializes the guest CPUs, so a patch is
// complete before another CPU runs again. The whole guest suite ran in
// 192 s that way here (earlier MTTCG runs: 100-177 s), well inside the
// guest's 12-minute limit.
// V30: `tiercache kvtarget -dir` attached through the kernel's nvme-tcp
// host: `tiercache ns create` through /dev/nvmeX makes, attaches and finds
// a KV namespace whose /dev/ngXnY stores values; nvme-cli's list-ns (-a),
// id-ctrl (TNVMCAP, UNVMCAP, OACS), ns-descs (NGUID), id-ns (Invalid I/O
// Command Set) and admin-passthru Identify CNS 05h agree with tiercache;
// a size beyond UNVMCAP, an NVM namespace (nvme create-ns --csi=0), a
// claim of QEMU's NVM namespace and a create on QEMU's controller are
// refused with nothing changed; a namespace another host attaches to the
// kernel's controller appears after the Namespace Attribute Changed event
// alone (the kernel logs its rescan) and goes when detached; after a
// target restart the name finds the same namespace and value; a namespace
// nvme-cli created is not deleted by `tiercache ns delete -nsid`
// (TestNamespaceManagementThroughKernel).
// V31: `tiercache kvtarget -hosts` with a secret from nvme-cli's
// gen-dhchap-key and a controller secret: the kernel connects with
// dhchap_secret and dhchap_ctrl_secret and stores through the namespace;
// a wrong secret, none, a wrong controller secret and an unlisted host NQN
// are refused by the kernel's connect and counted by the target
// (TestAuthThroughKernel).
// V32: the sidecar with tenants a and b given cold_bytes on that KV SSD
// (`tiercache kvtarget -dir`, cold.backend passthrough on a default
// namespace `tiercache ns create` made) makes a KV namespace per tenant
// through the kernel's /dev/nvmeX at its start; a, past its DRAM quota,
// evicts its own keys to its namespace while the sidecar runs and b writes
// nothing yet (INFO tenants); a namespace nvme-cli creates and attaches
// while the sidecar runs appears in the kernel and changes nothing for
// the sidecar; with the sidecar stopped (draining)
// each namespace's NUSE, read through the kernel, holds its own keys'
// bytes and less than the smallest other share more, and nvme-cli's holds
// none; a restart finds the same NGUIDs and reads every key from cold;
// `tiercache tenant drop b` (b gone from the config) deletes b's
// namespace and its /dev/ngXnY and leaves the default, a's and
// nvme-cli's (TestSidecarTenantNamespacesOnKVSSD).
//
// # Caveats
//
// TCG is slow (a guest CPU runs some 10-50x slower than the host, more
// when the host is loaded): guest tests keep their data small, and the
// guest has 2 GiB, so a package's own heavy tests (not -short) may be
// OOM-killed there; only vmtest/guest/... runs by default. A thread-mode
// (set_mempolicy) arena has no VMA policy, so automatic NUMA balancing
// migrates it to the CPUs' node within seconds of use: the guest shows it
// (TestRangeArenaImmuneToNumaBalancing logs it) but cannot assert the
// kernel's timing. The guest kernel is Debian 12's Linux 6.12, which
// scripts/guest-kernel installs (linux-image-6.12.N+deb12-amd64-unsigned),
// not the host's kernel and not linux-image-amd64's 6.1: on 6.1 NVMe
// passthrough cannot use registered buffers for a transfer that ends
// before its buffer does, a polled passthrough command on a poll queue
// never completes, and 6.1.192 oopses in usercopy_abort when the kvtarget
// reads its nvme-tcp socket (seen in V25). The code still handles 6.1: the
// emulated namespace falls back to plain addresses (Stats.Fixed false) and
// refuses IOPOLL with poll queues before 6.2, and the nvmens and nvmept
// suites pass on 6.1 expecting exactly that (`scripts/vmtest -kernel
// /boot/vmlinuz-6.1.0-57-amd64 -pkgs ./vmtest/guest/nvmens,...`). The
// guest loads nvme with one poll queue (ModuleParams). Kernel messages are silenced (printk level 1) so they do not
// split test output lines, but a late kernel oops can still interleave.
package vmtest
