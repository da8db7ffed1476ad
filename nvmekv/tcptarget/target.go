package tcptarget

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
)

// Target is an NVMe/TCP target with one subsystem (Options.NQN) holding
// KV namespaces (CSI 1): the one of Options.Namespace (NSID 1), or those
// hosts manage (Options.Namespaces). Each admin queue Connect creates a
// controller (the dynamic controller model); its I/O queues are further
// connections. Safe for concurrent use.
type Target struct {
	opts Options
	log  *zap.Logger
	nss  *nsTable
	ctx  context.Context // canceled by Close: stops in-flight namespace commands
	stop context.CancelFunc

	mu       sync.Mutex
	closed   bool
	lns      map[net.Listener]struct{}
	conns    map[*conn]struct{}
	ctrls    map[uint16]*controller
	nextCtrl uint16
	wg       sync.WaitGroup

	st stats
}

type stats struct {
	conns, protoErrs, cmds, reads, writes                       atomic.Uint64
	hostsRefused, authOK, authFailed, authMissing, authRequired atomic.Uint64
}

// Stats are the target's counters.
type Stats struct {
	Connections    uint64 // accepted so far
	ProtocolErrors uint64 // connections ended with a C2HTermReq
	Commands       uint64 // capsules executed (admin, fabrics and I/O)
	Reads, Writes  uint64 // KV Retrieve/List and Store/Delete commands
	Controllers    int    // live now
	// HostsRefused counts Connects from a host NQN not in Options.Hosts.
	HostsRefused uint64
	// AuthOK counts queues that authenticated; AuthFailed DH-HMAC-CHAP
	// transactions that failed (a wrong key, nothing acceptable offered,
	// a broken message); AuthMissing queues that ended without
	// authenticating (closed by the host, or at AuthTimeout); AuthRequired
	// commands refused before authentication.
	AuthOK, AuthFailed, AuthMissing, AuthRequired uint64
}

// New checks opts and returns a target that serves nothing until Serve.
func New(opts Options) (*Target, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var nss *nsTable
	if opts.Namespaces != nil {
		var err error
		if nss, err = openManagedTable(opts.NQN, opts.Namespaces); err != nil {
			return nil, err
		}
	} else {
		nss = newFixedTable(opts.NQN, opts.Namespace)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Target{opts: opts, log: opts.Logger, nss: nss, ctx: ctx, stop: stop,
		lns: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{}, ctrls: map[uint16]*controller{}, nextCtrl: 1}, nil
}

// NQN is the subsystem NQN hosts connect to.
func (t *Target) NQN() string { return t.opts.NQN }

// Serve accepts connections on ln until Close (then it returns ErrClosed)
// or an accept error. Each connection is one queue. A listener that is
// not on a loopback address is refused (ErrInsecure) unless every allowed
// host must authenticate (Options.AuthRequired).
func (t *Target) Serve(ln net.Listener) error {
	if err := t.loopbackOnly(ln); err != nil {
		ln.Close()
		return err
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		ln.Close()
		return ErrClosed
	}
	t.lns[ln] = struct{}{}
	t.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			t.mu.Lock()
			closed := t.closed
			delete(t.lns, ln)
			t.mu.Unlock()
			if closed {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("tcptarget: accept: %w", err)
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true) // the Linux host does the same (nvme_tcp_alloc_queue)
		}
		c := newConn(t, nc)
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			nc.Close()
			return ErrClosed
		}
		t.conns[c] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		t.st.conns.Add(1)
		go func() {
			defer t.wg.Done()
			c.serve()
			t.mu.Lock()
			delete(t.conns, c)
			t.mu.Unlock()
		}()
	}
}

// Close stops the listeners, closes every connection, waits for their
// goroutines and in-flight commands, then closes the managed namespaces
// (not Options.Namespace, the caller's). Idempotent.
func (t *Target) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	var errs []error
	for ln := range t.lns {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for c := range t.conns {
		c.nc.Close()
	}
	t.mu.Unlock()
	t.stop()
	t.wg.Wait()
	errs = append(errs, t.nss.close())
	return errors.Join(errs...)
}

// Stats returns a snapshot of the counters.
func (t *Target) Stats() Stats {
	t.mu.Lock()
	n := len(t.ctrls)
	t.mu.Unlock()
	return Stats{Connections: t.st.conns.Load(), ProtocolErrors: t.st.protoErrs.Load(), Commands: t.st.cmds.Load(),
		Reads: t.st.reads.Load(), Writes: t.st.writes.Load(), Controllers: n,
		HostsRefused: t.st.hostsRefused.Load(), AuthOK: t.st.authOK.Load(), AuthFailed: t.st.authFailed.Load(),
		AuthMissing: t.st.authMissing.Load(), AuthRequired: t.st.authRequired.Load()}
}

// addController creates a controller for an admin queue, or returns nil
// when MaxControllers are live.
func (t *Target) addController(admin *conn, hostNQN string, hostID [16]byte, katoMs uint32) *controller {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || len(t.ctrls) >= t.opts.MaxControllers {
		return nil
	}
	id := t.nextCtrl
	for t.ctrls[id] != nil || id == 0 || id >= 0xfff0 { // 0xFFF0..0xFFFF are reserved CNTLIDs
		id++
		if id >= 0xfff0 {
			id = 1
		}
	}
	t.nextCtrl = id + 1
	c := newController(t, id, admin, hostNQN, hostID, katoMs)
	t.ctrls[id] = c
	return c
}

// controllerIDs lists the live controllers with an ID of at least from
// whose host ok accepts, ascending.
func (t *Target) controllerIDs(from uint16, ok func(hostNQN string) bool) []uint16 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []uint16
	for id, c := range t.ctrls {
		if id >= from && ok(c.hostNQN) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (t *Target) controller(id uint16) *controller {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ctrls[id]
}

func (t *Target) dropController(c *controller) {
	t.mu.Lock()
	if t.ctrls[c.id] == c {
		delete(t.ctrls, c.id)
	}
	t.mu.Unlock()
	c.teardown()
}
