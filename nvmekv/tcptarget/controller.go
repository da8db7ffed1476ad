package tcptarget

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
)

// Controller register fields (NVMe Base Specification, Controller
// Registers; include/linux/nvme.h NVME_REG_*, NVME_CC_*, NVME_CSTS_*),
// reached through Property Get/Set at nvmetcp.RegCAP etc.
const (
	// VS 2.0.0: the host then reads the Namespace Identification
	// Descriptor list (nvme_identify_ns_descs needs VS ≥ 1.3 or CSI).
	versionValue = 0x00020000

	ccEN       = 1 << 0
	ccCSSShift = 4
	ccCSSMask  = 0x7
	ccCSSNVM   = 0 // NVM command set only
	ccCSSAll   = 6 // 110b: all supported I/O command sets (needs CAP.CSS bit 6)
	ccMPSShift = 7
	ccAMSShift = 11
	ccSHNShift = 14
	ccSHNMask  = 0x3

	cstsRDY        = 1 << 0
	cstsCFS        = 1 << 1
	cstsSHSTDone   = 2 << 2 // SHST 10b: shutdown processing complete
	capTimeout     = 15     // CAP.TO in 500 ms units (as nvmet_init_cap)
	capCSSNVM      = 1 << 37
	capCSSIOCS     = 1 << 43 // CAP.CSS bit 6: one or more I/O command sets (NVME_CAP_CSS_CSI)
	capTimeoutBits = 24
)

// controller is one association: an admin queue and its I/O queues.
type controller struct {
	t       *Target
	id      uint16
	hostNQN string
	hostID  [16]byte

	mu       sync.Mutex
	cc, csts uint32
	admin    *conn
	ioq      map[uint16]*conn
	nQueues  int    // I/O queues granted by Set Features Number of Queues (0 = not asked: 1)
	aec      uint32 // Asynchronous Event Configuration
	katoMs   uint32
	profile  uint32        // I/O Command Set Profile index (0: the only combination)
	kvConfig atomic.Uint32 // Key Value Configuration (featKVConfig); read by I/O queues without mu
	ev       events        // asynchronous events
	ka       *time.Timer
	gone     bool
}

func newController(t *Target, id uint16, admin *conn, hostNQN string, hostID [16]byte, katoMs uint32) *controller {
	c := &controller{t: t, id: id, admin: admin, hostNQN: hostNQN, hostID: hostID, katoMs: katoMs, ioq: map[uint16]*conn{}}
	c.kvConfig.Store(kvConfigDefault)
	c.armKeepAlive()
	return c
}

// capValue is CAP: MQES (0's based), CQR 0, TO, CSS = NVM | I/O command
// sets, MPSMIN = MPSMAX = 0 (4 KiB); as drivers/nvme/target/core.c
// nvmet_init_cap, with the IOCS bit a Linux host needs to keep a CSI 1
// namespace (drivers/nvme/host/core.c nvme_multi_css, nvme_scan_ns).
func (c *controller) capValue() uint64 {
	return uint64(c.t.opts.QueueEntries-1) | capTimeout<<capTimeoutBits | capCSSNVM | capCSSIOCS
}

func (c *controller) ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.csts&cstsRDY != 0
}

// setCC applies a CC write (NVMe Base Specification, Controller
// Configuration; the checks nvmet_update_cc makes): EN 0→1 becomes ready
// if IOSQES = 6, IOCQES = 4, MPS = 0, AMS = 0 and CSS is 000b or 110b, else
// CSTS.CFS; EN 1→0 resets (the I/O queues are closed); SHN ≠ 0 flushes
// the namespace and reports shutdown complete.
func (c *controller) setCC(v uint32) {
	c.mu.Lock()
	old := c.cc
	c.cc = v
	var closeIO []*conn
	switch {
	case v&ccEN != 0 && old&ccEN == 0:
		css := v >> ccCSSShift & ccCSSMask
		iosqes, iocqes := v>>16&0xf, v>>20&0xf
		if iosqes != 6 || iocqes != 4 || v>>ccMPSShift&0xf != 0 || v>>ccAMSShift&0x7 != 0 || (css != ccCSSNVM && css != ccCSSAll) {
			c.csts |= cstsCFS
		} else {
			c.csts |= cstsRDY
		}
	case v&ccEN == 0 && old&ccEN != 0:
		c.csts = 0
		for qid, q := range c.ioq {
			closeIO = append(closeIO, q)
			delete(c.ioq, qid)
		}
	}
	shutdown := v>>ccSHNShift&ccSHNMask != 0 && old>>ccSHNShift&ccSHNMask == 0
	c.mu.Unlock()
	for _, q := range closeIO {
		q.nc.Close()
	}
	if shutdown {
		if err := c.t.nss.flushAll(func(ns nvmekv.Namespace) error { return ns.Flush(c.t.ctx) }); err != nil {
			c.t.log.Warn("tcptarget: flush at controller shutdown", zap.Uint16("cntlid", c.id), zap.Error(err))
		}
		c.mu.Lock()
		c.csts |= cstsSHSTDone
		c.mu.Unlock()
	}
}

func (c *controller) multiCSS() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cc>>ccCSSShift&ccCSSMask == ccCSSAll
}

// grantedQueues is how many I/O queues the host may connect.
func (c *controller) grantedQueues() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nQueues == 0 {
		return 1
	}
	return c.nQueues
}

// addIOQueue attaches an I/O queue connection; false if qid is taken.
func (c *controller) addIOQueue(qid uint16, q *conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone || c.ioq[qid] != nil {
		return false
	}
	c.ioq[qid] = q
	return true
}

func (c *controller) removeIOQueue(qid uint16, q *conn) {
	c.mu.Lock()
	if c.ioq[qid] == q {
		delete(c.ioq, qid)
	}
	c.mu.Unlock()
}

// armKeepAlive (re)starts the keep-alive timer: no admin command within
// KATO × KeepAliveGrace tears the controller down (NVMe Base
// Specification, Keep Alive Timer; the host sends Keep Alive every KATO/2,
// drivers/nvme/host/core.c nvme_keep_alive_work_period).
func (c *controller) armKeepAlive() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return
	}
	if c.ka != nil {
		c.ka.Stop()
		c.ka = nil
	}
	if c.katoMs == 0 {
		return
	}
	d := time.Duration(c.katoMs) * time.Millisecond * time.Duration(c.t.opts.KeepAliveGrace)
	c.ka = time.AfterFunc(d, func() {
		c.t.log.Warn("tcptarget: keep-alive timeout, tearing the controller down", zap.Uint16("cntlid", c.id), zap.Duration("after", d))
		c.t.dropController(c)
	})
}

// teardown closes every queue of the controller.
func (c *controller) teardown() {
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return
	}
	c.gone = true
	if c.ka != nil {
		c.ka.Stop()
	}
	qs := []*conn{c.admin}
	for _, q := range c.ioq {
		qs = append(qs, q)
	}
	c.ioq = map[uint16]*conn{}
	c.mu.Unlock()
	for _, q := range qs {
		q.nc.Close()
	}
}
