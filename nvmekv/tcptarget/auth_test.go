package tcptarget

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/dhchap"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

const (
	nqnA = "nqn.2014-08.org.nvmexpress:uuid:auth-a"
	nqnB = "nqn.2014-08.org.nvmexpress:uuid:auth-b"
	nqnC = "nqn.2014-08.org.nvmexpress:uuid:auth-c"
)

func secret(t *testing.T, h dhchap.HashID) *dhchap.Secret {
	s, err := dhchap.GenerateSecret(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

// TestAuthOverTCP (NT13): with Hosts set, a host with the right secret
// authenticates its admin and I/O queues (one way, and both ways with a
// controller secret) and works; a wrong secret is refused by the
// controller, a wrong controller secret by the host, a host without a
// secret gets Authentication Required for every command and is closed
// after AuthTimeout, a host NQN not listed is refused at Connect; each is
// counted, and none of them reaches a namespace.
func TestAuthOverTCP(t *testing.T) {
	ka, kb, kc := secret(t, dhchap.SHA256), secret(t, 0), secret(t, dhchap.SHA512)
	wrong := secret(t, dhchap.SHA256)
	o := Options{Hosts: []HostAuth{{NQN: nqnA, Secret: ka}, {NQN: nqnB, Secret: kb, CtrlSecret: kc}}, AuthTimeout: 300 * time.Millisecond}
	tg, addr := startTarget(t, o)
	connect := func(nqn string, s, cs *dhchap.Secret) (*nvmetcp.Host, error) {
		h, err := nvmetcp.Connect(addr, nvmetcp.HostOptions{SubNQN: tg.NQN(), HostNQN: nqn, Secret: s, CtrlSecret: cs, IOQueue: true, Timeout: 10 * time.Second})
		if err == nil {
			t.Cleanup(func() { h.Close() })
		}
		return h, err
	}
	a, err := connect(nqnA, ka, nil)
	if err != nil || !a.Authenticated {
		t.Fatalf("host a with its secret: %v", err)
	}
	c, _ := nvmekv.EncodeStore(1, []byte("k"), 1, 0)
	if r, err := a.IOQ.Exec(c.Bytes(), []byte("v"), 0); err != nil || r.Status != 0 {
		t.Fatalf("Store after authenticating: %+v %v", r, err)
	}
	if b, err := connect(nqnB, kb, kc); err != nil || !b.Authenticated {
		t.Fatalf("host b, both ways: %v", err)
	}
	if st := tg.Stats(); st.AuthOK != 4 || st.AuthFailed != 0 {
		t.Fatalf("after two hosts with two queues each: %+v", st)
	}
	if _, err := connect(nqnA, wrong, nil); !errors.Is(err, nvmetcp.ErrAuth) || !errors.Is(err, dhchap.ErrRefused) {
		t.Fatalf("a wrong secret: %v", err)
	}
	if _, err := connect(nqnB, kb, wrong); !errors.Is(err, dhchap.ErrControllerAuth) {
		t.Fatalf("a wrong controller secret: %v", err)
	}
	if st := tg.Stats(); st.AuthFailed != 2 || st.AuthOK != 4 {
		t.Fatalf("after a wrong host and a wrong controller secret: %+v", st)
	}
	if _, err := connect(nqnA, nil, nil); !errors.Is(err, nvmetcp.ErrAuth) {
		t.Fatalf("no secret: %v", err)
	}
	if _, err := connect(nqnC, kc, nil); err == nil {
		t.Fatal("a host not listed connected")
	} else if st := tg.Stats(); st.HostsRefused != 1 {
		t.Fatalf("host not allowed: %v, stats %+v", err, st)
	}
	// A host that does not authenticate: every command is refused, and the
	// queue is closed after AuthTimeout.
	q := dialQueue(t, addr)
	r, err := q.Connect(nvmetcp.ConnectParams{SQSize: 31, CNTLID: nvmetcp.CntlidAny, HostID: hostID, SubNQN: tg.NQN(), HostNQN: nqnA})
	if err != nil || r.Status != 0 || r.DW0&nvmetcp.ConnectAuthATR == 0 {
		t.Fatalf("Connect: %+v %v, want ATR", r, err)
	}
	for _, sqe := range [][nvmetcp.SQEBytes]byte{adminSQE(adminIdentify, 0, 1, 0), nvmetcp.FabricsSQE(nvmetcp.FCPropertyGet)} {
		if r, err := q.Exec(sqe, nil, 4096); err != nil || r.Status != scAuthRequired|scDNR {
			t.Fatalf("command before authentication: %#x %v", r.Status, err)
		}
	}
	before := tg.Stats().AuthRequired
	time.Sleep(2 * o.AuthTimeout)
	if _, err := q.Exec(adminSQE(adminKeepAlive, 0, 0, 0), nil, 0); err == nil {
		t.Fatal("the unauthenticated queue is still open after AuthTimeout")
	}
	if st := tg.Stats(); st.AuthMissing == 0 || before < 2 {
		t.Fatalf("refusals not counted: %+v", st)
	}
	if st := tg.Stats(); st.Writes != 1 {
		t.Fatalf("only host a's Store may have reached the namespace: %+v", st)
	}
}

// TestAuthNegotiation: the controller takes its first acceptable hash
// and group (null DH included when configured), and refuses a host whose
// offer has none of them.
func TestAuthNegotiation(t *testing.T) {
	ka := secret(t, dhchap.SHA256)
	tg, addr := startTarget(t, Options{Hosts: []HostAuth{{NQN: nqnA, Secret: ka}}, AuthHashes: []dhchap.HashID{dhchap.SHA384}, AuthGroups: []dhchap.DHGroup{dhchap.NullDH}})
	h, err := nvmetcp.Connect(addr, nvmetcp.HostOptions{SubNQN: tg.NQN(), HostNQN: nqnA, Secret: ka})
	if err != nil {
		t.Fatalf("SHA-384 with the null group: %v", err)
	}
	h.Close()
	_, err = nvmetcp.Connect(addr, nvmetcp.HostOptions{SubNQN: tg.NQN(), HostNQN: nqnA, Secret: ka, Groups: []dhchap.DHGroup{dhchap.FFDHE2048}})
	if !errors.Is(err, dhchap.ErrRefused) {
		t.Fatalf("a host offering only ffdhe2048 to a null-only controller: %v", err)
	}
}

// TestLoopbackOnly (NT14): Serve refuses a listener on a non-loopback
// address unless every allowed host must authenticate; options that list
// a controller secret without a host secret are refused.
func TestLoopbackOnly(t *testing.T) {
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln
	}
	for _, o := range []Options{{}, {Hosts: []HostAuth{{NQN: nqnA}}}, {Hosts: []HostAuth{{NQN: nqnA, Secret: secret(t, 0)}, {NQN: nqnB}}}} {
		tg, _ := startTarget(t, o)
		if err := tg.Serve(listen()); !errors.Is(err, ErrInsecure) {
			t.Fatalf("Serve on 0.0.0.0 with hosts %+v: %v", o.Hosts, err)
		}
	}
	tg, _ := startTarget(t, Options{Hosts: []HostAuth{{NQN: nqnA, Secret: secret(t, 0)}}})
	ln := listen()
	done := make(chan error, 1)
	go func() { done <- tg.Serve(ln) }()
	if _, err := nvmetcp.Dial(ln.Addr().String(), 10*time.Second); err != nil {
		t.Fatalf("dial the authenticated listener: %v", err)
	}
	tg.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if _, err := New(Options{Namespace: nil, Hosts: []HostAuth{{NQN: nqnA, CtrlSecret: secret(t, 0)}}}); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("a controller secret alone: %v", err)
	}
}
