// Package nvmetcp is NVMe/TCP on the wire (NVM Express TCP Transport
// Specification 1.0) for both ends: the PDU layouts and Fabrics command
// fields nvmekv/tcptarget serves, and a small host (initiator) that speaks
// them as the Linux nvme-tcp host does (drivers/nvme/host/tcp.c,
// fabrics.c): Queue, one connection and one command at a time (what the
// tests of tcptarget drive it with).
//
// # Invariants
//
//   - N1: Queue.Exec sends a write in the capsule up to the queue's
//     in-capsule limit and by R2T/H2CData beyond it, and reads C2HData in
//     order, refusing data past the read buffer (TestKVConformanceOverTCP
//     in nvmekv/tcptarget).
//
// # Caveats
//
//   - Queue serializes commands: an Asynchronous Event Request would block
//     it.
package nvmetcp
