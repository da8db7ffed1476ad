package tcptarget

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/dhchap"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// Options configure a Target.
type Options struct {
	// Namespace is the KV namespace served as NSID 1 (CSI 1) to every
	// host, without Namespace Management. The target does not close it.
	// Exactly one of Namespace and Namespaces is set.
	Namespace nvmekv.Namespace
	// Namespaces turns on Namespace Management and Attachment: the
	// namespaces are created, attached, detached and deleted by hosts.
	Namespaces *NamespaceOptions
	// NQN is the subsystem's NVMe Qualified Name; default DefaultNQN.
	NQN string
	// Serial and Model fill Identify Controller SN and MN; defaults
	// "tiercache-kv" and "tiercache KV over NVMe/TCP".
	Serial, Model string
	// MaxValueBytes is the largest Store value announced (KVVML) and
	// accepted; default min(the namespace's MaxValueLen, 128 KiB).
	MaxValueBytes int
	// MaxTransferBytes is the largest data transfer of one command
	// (Identify Controller MDTS, in 4 KiB units, a power of two); default
	// 256 KiB. Must exceed MaxValueBytes, so a Store one byte too big
	// still reaches the target and gets Invalid Value Size.
	MaxTransferBytes int
	// InCapsuleBytes is how much write data an I/O command may carry in
	// its capsule (IOCCSZ = (InCapsuleBytes+64)/16); larger writes use
	// R2T and H2CData. Default 8 KiB, a multiple of 16.
	InCapsuleBytes int
	// MaxH2CDataBytes is MAXH2CDATA in ICResp (at least 4096, a multiple
	// of 4), also the size of the C2HData PDUs sent; default 32 KiB.
	MaxH2CDataBytes int
	// QueueEntries is the largest submission queue a host may connect
	// (CAP.MQES+1), which is also the most commands in flight on one
	// connection; default 128.
	QueueEntries int
	// MaxIOQueues is the most I/O queues per controller granted by Set
	// Features Number of Queues; default 8.
	MaxIOQueues int
	// MaxControllers bounds the live controllers (admin connections that
	// sent Connect); default 4.
	MaxControllers int
	// KeepAliveGrace multiplies the host's keep-alive timeout (KATO, from
	// Connect or Set Features): a controller that gets no admin command
	// within KATO × KeepAliveGrace is torn down; default 2.
	KeepAliveGrace int
	// Hosts, when not empty, are the only hosts that may connect (by host
	// NQN), and a host with a Secret must authenticate with DH-HMAC-CHAP.
	// Empty: any host NQN connects, nobody authenticates, and Serve
	// refuses listeners that are not on a loopback address.
	Hosts []HostAuth
	// AuthHashes and AuthGroups are the DH-HMAC-CHAP hash functions and
	// DH groups the controller accepts, in order of preference; default
	// dhchap.DefaultHashes and dhchap.DefaultGroups (SHA-256 and
	// ffdhe2048 first).
	AuthHashes []dhchap.HashID
	AuthGroups []dhchap.DHGroup
	// AuthTimeout is how long a queue may take to authenticate after its
	// Connect before it is closed; default 10 s.
	AuthTimeout time.Duration
	// ICReqTimeout is how long a new connection may take to send ICReq;
	// default 10 s (the Linux host's own ICResp wait).
	ICReqTimeout time.Duration
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// DefaultNQN is the subsystem NQN when Options.NQN is empty.
const DefaultNQN = "nqn.2026-12.io.tiercache:kvssd"

// EnsureDefaults fills zero fields.
func (o *Options) EnsureDefaults() {
	if o.NQN == "" {
		o.NQN = DefaultNQN
	}
	if o.Serial == "" {
		o.Serial = "tiercache-kv"
	}
	if o.Model == "" {
		o.Model = "tiercache KV over NVMe/TCP"
	}
	if o.MaxValueBytes == 0 {
		o.MaxValueBytes = 128 << 10
		if o.Namespace != nil {
			if m := o.Namespace.Limits().MaxValueLen; m > 0 {
				o.MaxValueBytes = min(o.MaxValueBytes, m)
			}
		}
	}
	if o.MaxTransferBytes == 0 {
		o.MaxTransferBytes = 256 << 10
	}
	if o.InCapsuleBytes == 0 {
		o.InCapsuleBytes = 8 << 10
	}
	if o.MaxH2CDataBytes == 0 {
		o.MaxH2CDataBytes = 32 << 10
	}
	if o.QueueEntries == 0 {
		o.QueueEntries = 128
	}
	if o.MaxIOQueues == 0 {
		o.MaxIOQueues = 8
	}
	if o.MaxControllers == 0 {
		o.MaxControllers = 4
	}
	if o.KeepAliveGrace == 0 {
		o.KeepAliveGrace = 2
	}
	if o.AuthTimeout == 0 {
		o.AuthTimeout = 10 * time.Second
	}
	if o.ICReqTimeout == 0 {
		o.ICReqTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Namespaces != nil {
		o.Namespaces.ensureDefaults()
	}
}

// Validate reports every problem at once.
func (o *Options) Validate() error {
	var errs []error
	bad := func(f string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+f, append([]any{ErrBadOptions}, a...)...))
	}
	if (o.Namespace == nil) == (o.Namespaces == nil) {
		bad("exactly one of Namespace (a fixed namespace) and Namespaces (Namespace Management) is required")
	}
	if o.Namespaces != nil {
		o.Namespaces.validate(bad)
	}
	o.validateHosts(bad)
	if len(o.NQN) > nvmetcp.NQNFieldBytes-1 {
		bad("NQN is %d bytes, at most %d", len(o.NQN), nvmetcp.NQNFieldBytes-1)
	}
	if len(o.Serial) > 20 || len(o.Model) > 40 {
		bad("Serial (%d bytes) must fit 20 and Model (%d bytes) 40", len(o.Serial), len(o.Model))
	}
	if t := o.MaxTransferBytes; t < 8192 || t&(t-1) != 0 || t > 16<<20 {
		bad("MaxTransferBytes %d must be a power of two from 8 KiB to 16 MiB", t)
	}
	if o.MaxValueBytes < 1 || o.MaxValueBytes >= o.MaxTransferBytes {
		bad("MaxValueBytes %d must be 1..MaxTransferBytes-1 (%d)", o.MaxValueBytes, o.MaxTransferBytes-1)
	}
	if o.Namespace != nil {
		if m := o.Namespace.Limits().MaxValueLen; m > 0 && o.MaxValueBytes > m {
			bad("MaxValueBytes %d exceeds the namespace's largest value %d", o.MaxValueBytes, m)
		}
	}
	if c := o.InCapsuleBytes; c < 0 || c%16 != 0 || c > o.MaxTransferBytes {
		bad("InCapsuleBytes %d must be a multiple of 16 from 0 to MaxTransferBytes", c)
	}
	if d := o.MaxH2CDataBytes; d < 4096 || d%4 != 0 || d > o.MaxTransferBytes {
		bad("MaxH2CDataBytes %d must be a multiple of 4 from 4096 to MaxTransferBytes", d)
	}
	if q := o.QueueEntries; q < 2 || q > 1024 {
		bad("QueueEntries %d must be 2..1024", q)
	}
	if o.MaxIOQueues < 1 || o.MaxIOQueues > 64 {
		bad("MaxIOQueues %d must be 1..64", o.MaxIOQueues)
	}
	if o.MaxControllers < 1 || o.MaxControllers > 0xffef {
		bad("MaxControllers %d must be 1..65519", o.MaxControllers)
	}
	if o.KeepAliveGrace < 1 {
		bad("KeepAliveGrace %d must be at least 1", o.KeepAliveGrace)
	}
	return errors.Join(errs...)
}

// mdts is MaxTransferBytes as Identify Controller MDTS: a power of two in
// units of the minimum memory page size (CAP.MPSMIN = 0: 4 KiB).
func (o *Options) mdts() uint8 { return uint8(bits.TrailingZeros(uint(o.MaxTransferBytes / 4096))) }

// ioccsz is the I/O queue command capsule size in 16-byte units (Identify
// Controller IOCCSZ, NVMe over Fabrics; the Linux host sends writes of up
// to IOCCSZ*16-64 bytes in the capsule: nvme_tcp_inline_data_size).
func (o *Options) ioccsz() uint32 { return uint32(nvmetcp.SQEBytes+o.InCapsuleBytes) / 16 }
