// Package kvconform is the conformance suite for an nvmekv.Namespace that
// claims to be a KV SSD: every KV command (Store, Retrieve, List, Delete,
// Exist) and every status code a host meets (key does not exist, key
// exists, invalid value size, invalid key size), List paging, linked
// chains and values larger than one Store (nvmekv.KV chunks). It runs the
// same checks against the emulated namespace (nvmekv/emu), against the
// NVMe/TCP target through the in-process initiator (nvmekv/tcptarget),
// and against /dev/ngXnY through the Linux nvme-tcp driver in the QEMU
// guest (vmtest/guest/kvtcp).
//
// # Invariants
//
//   - KC1: Run passes on the emulated namespace called directly
//     (nvmekv/emu TestKVConformance), on the target through the in-process
//     initiator (nvmekv/tcptarget TestKVConformanceOverTCP) and through
//     the kernel (vmtest/guest/kvtcp TestKVConformanceThroughKernel).
//   - KC2: a command that fails with a status has changed nothing: the
//     value of a failed Store (must-exist, must-not-exist, too big) is not
//     stored and the old value reads back (Run's StoreOptions and
//     ValueTooBig).
//
// # Caveats
//
//   - Keys carry a random per-run prefix, so the namespace need not be
//     empty, but List paging walks every key from the prefix on.
//   - The raw checks (key length 0 and 17, which nvmekv never encodes)
//     need a Raw function; without one they are skipped with a reason.
package kvconform
