// Package nvmetcp is NVMe/TCP on the wire (NVM Express TCP Transport
// Specification 1.0) for both ends: the PDU layouts and Fabrics command
// fields nvmekv/tcptarget serves, and a small host (initiator) that speaks
// them as the Linux nvme-tcp host does (drivers/nvme/host/tcp.c,
// fabrics.c): Queue, one connection and one command at a time; Host, a
// connected controller (admin queue, optionally one I/O queue) that
// authenticates with DH-HMAC-CHAP (nvmekv/dhchap) when the controller asks
// for it and runs admin commands (what nvmekv/nsadmin can manage
// namespaces through, and what the tests of tcptarget drive it with).
//
// The host is not a block driver: no multipath, no reconnect, no keep
// alive of its own, no digests.
//
// # Invariants
//
//   - N1: Queue.Exec sends a write in the capsule up to the queue's
//     in-capsule limit and by R2T/H2CData beyond it, and reads C2HData in
//     order, refusing data past the read buffer (TestKVConformanceOverTCP
//     in nvmekv/tcptarget).
//   - N2: a Host that was sent a Connect response with ATR set
//     authenticates that queue before any other command, and fails with
//     ErrAuth wrapping the controller's refusal (dhchap.ErrRefused) or
//     its own (dhchap.ErrControllerAuth) (TestAuthOverTCP in
//     nvmekv/tcptarget).
//
// # Caveats
//
//   - Queue serializes commands: an Asynchronous Event Request would block
//     it.
package nvmetcp
