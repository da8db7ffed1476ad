// Package nsadmin manages KV namespaces on an NVMe controller with
// Namespace Management (admin opcode 0Dh: create, delete) and Namespace
// Attachment (15h: attach, detach) from the host side (NVMe Base
// Specification 2.0), through an Admin: a kernel controller's char device
// /dev/nvmeX (the NVME_IOCTL_ADMIN_CMD ioctl of
// include/uapi/linux/nvme_ioctl.h, CharDevice) or an NVMe/TCP connection
// of its own (nvmetcp.Host, which the tests use against
// nvmekv/tcptarget).
//
// Controller is the mechanism: Identify (OACS, TNVMCAP, UNVMCAP, NN),
// the namespace lists, each namespace's identity (NGUID, else EUI-64),
// size and command set, Create, Attach, Detach, Delete, and the
// namespace's generic char device /dev/ngXnY under a kernel controller
// (Device, WaitDevice: each /dev/ngXn* asked its NSID, as Linux names
// them by a head instance, not by NSID).
//
// Manager is the policy the sidecar's tenants use: a name (a tenant's)
// maps to one namespace, found again after any restart by its identity,
// never by NSID. Ownership is recorded in a registry file on the host
// (JSON, RegistryPath; written by rename, locked with flock while a
// Manager changes it), not on the device: the host cannot choose an NGUID
// (the controller assigns it), and a file says exactly what this host
// created. A namespace is deleted only when its record says this host
// created it; one claimed from elsewhere is only ever forgotten. The
// record is written after the create and before the attach, so a crash
// in between leaves the namespace recorded (the next Ensure attaches it);
// a crash between the controller's create and the record leaves an
// unrecorded namespace, listed by `tiercache ns list` as nobody's and
// never deleted by this package.
//
// # Invariants
//
//   - NA1: Ensure of a recorded name returns the namespace with the
//     recorded identity, wherever its NSID is now and after a restart of
//     either side, and creates nothing; concurrent Managers on one
//     registry lose no record (TestEnsureFindsItsNamespaceAgain).
//   - NA2: no call deletes a namespace the registry does not record as
//     created by this host (ErrNotOwned); a namespace or a name is
//     recorded once (ErrClaimed) (TestNeverDeletesWhatItDidNotCreate).
//   - NA3: a size beyond the unallocated capacity (ErrCapacity), a
//     recorded namespace asked with another size (ErrMismatch) or gone
//     from the device (ErrNotFound: it is not created again) and a
//     controller without Namespace Management (ErrNoManagement, before
//     any command is sent) change nothing on the device (TestRefusals).
//   - NA4: Check reports every reason Ensure or Claim of a set of names
//     would fail (NA3's, a claimed namespace of another command set, one
//     namespace claimed twice or recorded under another name, the new
//     ones together past the unallocated capacity) and sends nothing but
//     Identify (TestCheckAll).
//
// # Caveats
//
//   - Namespaces do not grow: a recorded one asked with another size is
//     refused.
//   - Device finds the per-controller node only; a multipath head node
//     (ngSnY of a multi-controller subsystem) is not looked for.
//   - CharDevice needs CAP_SYS_ADMIN (drivers/nvme/host/ioctl.c).
package nsadmin
