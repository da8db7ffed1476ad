// Package tcptarget is a software KV SSD: an NVMe/TCP target (NVM Express
// TCP Transport Specification 1.0; NVMe over Fabrics; the wire format is
// nvmekv/nvmetcp's) with one subsystem (Options.NQN) whose namespaces use
// the Key Value command set (CSI 1, NVMe KV Command Set Specification 1.0)
// and are served from nvmekv.Namespaces, normally emulated namespaces
// (nvmekv/emu): the target parses each capsule, turns a KV command into an
// nvmekv.Op and runs it with the namespace's Do, so the emulated
// namespace's command interpreter answers it with its own status codes.
// Either one fixed namespace (Options.Namespace, NSID 1, every host sees
// it) or Namespace Management (Options.Namespaces): hosts create, attach,
// detach and delete namespaces, kept in a state file across restarts. The
// Linux nvme-tcp host connects to it and exposes each namespace it sees as
// /dev/ngXnY only
// (drivers/nvme/host/core.c nvme_update_ns_info_generic), where nvmekv's
// Passthrough drives it with NVME_URING_CMD_IO. `tiercache kvtarget` runs
// it.
//
// What it implements (the sequences of drivers/nvme/host/tcp.c, fabrics.c
// and core.c in Linux 6.1):
//
//   - PDUs: ICReq/ICResp (no digests; PFV 0, CPDA 0, MAXH2CDATA),
//     CapsuleCmd (in-capsule data up to 8 KiB on admin and Fabrics
//     commands, InCapsuleBytes on I/O queues), CapsuleResp, C2HData (in
//     MaxH2CDataBytes pieces, LAST on the final one, then a CapsuleResp),
//     R2T (one per write, for the whole transfer) and H2CData, C2HTermReq.
//   - Fabrics: Connect (admin: dynamic controller model, up to
//     MaxControllers; I/O: QIDs up to the granted queue count, same host;
//     only the hosts of Options.Hosts when it is set), Authentication Send
//     and Receive (DH-HMAC-CHAP, nvmekv/dhchap, on every queue of a host
//     with a secret), Property Get (CAP with CSS bits NVM and I/O command sets, VS 2.0,
//     CC, CSTS) and Set (CC: enable, reset, shutdown with a namespace
//     Flush).
//   - Admin: Identify (controller, with OACS Namespace Management,
//     TNVMCAP and UNVMCAP when namespaces are managed; active and
//     allocated namespace lists, general and per command set; namespace
//     identification descriptors with the NGUID, a UUID and CSI 1; the
//     command set independent namespace with NSTAT ready; the KV namespace
//     (CNS 05h and 1Bh, CSI 1); the controllers attached to a namespace
//     and of the subsystem (CNS 12h, 13h); the command-set-specific
//     controller for CSI 0 and 1; the I/O command set combinations, CNS
//     1Ch), Namespace Management (create, delete; opcode 0Dh) and
//     Namespace Attachment (attach, detach; opcode 15h), Set and Get
//     Features (Number of Queues, Async Event Configuration, Keep Alive
//     Timer, I/O Command Set Profile, Key Value Configuration), Get Log
//     Page (Error, SMART, Changed Namespace List, Commands Supported and
//     Effects for CSI 0 and 1), Asynchronous Event Request (Namespace
//     Attribute Changed), Abort (never aborts) and Keep Alive.
//   - I/O: Store, Retrieve, List, Delete, Exist and Flush.
//
// Key Value Configuration (FID 20h) has one field, EDNEK (Error on Delete
// of Non-Existent Key, CDW11 bit 0), set by default: the namespace answers
// a Delete of a missing key with 87h, as the conformance suite expects;
// cleared, the target completes that Delete successfully. It is kept per
// controller and not saveable. nvmekv itself never sets it.
//
// Namespaces are private (NMIC 0, CMIC 0): one is attached to one host
// NQN, and every controller that host connects sees it, also the ones it
// connects after a restart of either side (the dynamic controller model
// gives a host a new CNTLID each time, so the Controller List of Namespace
// Attachment names controllers only to say which host). A namespace
// attached to no host is allocated and reached by nobody.
//
// # Invariants
//
//   - NT1: the answers the Linux host (drivers/nvme/host; 6.1's checks,
//     and the guest's 6.12 connects to it in vmtest V23) checks during
//     connect and scan are
//     what it needs to keep a CSI 1 namespace: CAP.CSS bit 6, CNTLID equal
//     to the Connect's, KAS ≠ 0, IOCCSZ ≥ 4, ICDOFF 0, SGLS, a CSI
//     descriptor of 1, NSTAT ready and a Commands Supported and Effects
//     log for CSI 1 with nothing beyond CSUPP|LBCC (TestConnectSequence).
//   - NT2: a held AER never blocks other admin commands; shutdown reports
//     SHST complete after the namespace is flushed (TestConnectSequence).
//   - NT3: the nvmekv conformance suite passes through the target: every
//     KV command and status, List paging, linked chains, values larger
//     than one Store; writes above the in-capsule limit go by R2T and
//     H2CData, reads larger than MaxH2CDataBytes by several C2HData
//     (TestKVConformanceOverTCP).
//   - NT4: an I/O command that must fail (wrong NSID, unknown opcode, key
//     length 0 or above 16, value above MaxValueBytes, value size ≠ data
//     length, incompatible options) gets its status without any R2T, and
//     changes nothing (TestKVStatusCodes).
//   - NT5: a PDU that breaks the protocol (before ICReq, bad ICReq, unknown
//     type, wrong HLEN, PLEN or PDO, digest flags, an oversized capsule,
//     H2CData for an unknown TTAG or at a wrong offset, more commands than
//     the queue's size) ends that connection with one C2HTermReq naming
//     the fatal error status; other connections and the stored data are
//     unaffected (TestHostileInput); no byte stream makes the target panic
//     or keeps a connection alive after the host closed it (FuzzPDUStream).
//   - NT6: a refused Connect leaves the connection usable; no admin command
//     runs before Connect and CC.EN; a controller over MaxControllers gets
//     Controller Busy until an admin queue closes (TestConnectRefusals).
//   - NT7: memory is bounded per connection: at most sqsize+1 commands in
//     flight (Connect's SQSIZE, at most QueueEntries), each with at most
//     MaxTransferBytes of data, and a capsule is at most 72 + 8 KiB (or
//     InCapsuleBytes) bytes; a larger PLEN is refused before anything is
//     allocated (TestHostileInput).
//   - NT8: Key Value Configuration reads EDNEK set until a Set Features
//     clears it; with it clear a Delete of a missing key succeeds, with it
//     set it answers KV Key Does Not Exist; a reserved bit is refused and
//     changes nothing (TestKVConfigurationFeature).
//   - NT9: a created namespace takes its size from UNVMCAP and is active
//     only for the host it is attached to: another host neither lists nor
//     reaches it (Invalid Namespace); detached it answers Invalid
//     Namespace, deleted its capacity returns (TestNamespaceManagement).
//   - NT10: a Namespace Management or Attachment command that fails (too
//     large, another command set, a shared or other-format namespace, no
//     NSID left, an unknown controller, already attached, private, not
//     attached) gets its status and changes neither the table nor the
//     state file; without Namespace Management both are Invalid Opcode
//     (TestNamespaceManagementRefusals).
//   - NT11: a change of the namespaces a host sees completes one held
//     Asynchronous Event Request of each of its controllers (or the next
//     one) with Namespace Attribute Changed, once until the host reads the
//     Changed Namespace List, which names the NSIDs changed
//     (TestNamespaceAttributeChanged).
//   - NT12: the state file is rewritten before a change is acknowledged; a
//     target opened on it has the same namespaces, identifiers, data and
//     attachments; one that does not fit the options is refused at New
//     and left unchanged (TestNamespacesPersist).
//   - NT15: Namespace Management and Attachment run beside the admin
//     queue, which answers Keep Alive meanwhile; a namespace being created
//     has its NSID and capacity taken and is listed by nobody until its
//     store exists (TestSlowCreateKeepsAdminQueue).
//   - NT13: with Options.Hosts, a host NQN not listed is refused at
//     Connect; a listed host with a secret gets ATR and every command of
//     that queue but Authentication Send/Receive answers Authentication
//     Required until DH-HMAC-CHAP succeeds; a wrong secret (or a host
//     refusing the controller's proof) ends the transaction and the
//     queue, and a queue not authenticated within AuthTimeout is closed;
//     each is counted in Stats (TestAuthOverTCP, TestAuthNegotiation).
//   - NT14: Serve refuses a listener that is not on a loopback address
//     unless every allowed host has a secret (TestLoopbackOnly).
//
// # Caveats
//
//   - No digests and no TLS (TP 8011): the Linux host does TLS 1.3 with a
//     pre-shared key, which Go's crypto/tls does not offer. DH-HMAC-CHAP
//     proves who connects but does not encrypt: a listener reached over
//     an untrusted network needs IPsec or a tunnel for confidentiality.
//   - Only KV namespaces, all private; no reservations, no ANA; the only
//     asynchronous event is Namespace Attribute Changed; the Error log is
//     always empty. NVM Identify Namespace (CNS 00h, 11h) of a KV
//     namespace answers Invalid I/O Command Set.
//   - Keep-alive is enforced with slack (KATO × KeepAliveGrace), resetting
//     on every admin command.
//   - The List buffer layout and Retrieve DW0 are nvmekv's (see nvmekv's
//     caveats); the target passes the namespace's answers through.
package tcptarget
