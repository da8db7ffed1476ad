package server

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestStartServesGivenListeners (S30): listeners made elsewhere are served
// as given, one requiring AUTH, and the socket path in the options is
// neither created nor removed; Close closes them.
func TestStartServesGivenListeners(t *testing.T) {
	path := shortSocket(t)
	ul, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unused := shortSocket(t)
	s, err := New(newTierCache(t), Options{UnixSocket: unused, RequirePass: "pw", ShutdownTimeout: 2 * time.Second,
		Listeners: []Listener{{Listener: ul}, {Listener: tl, RequireAuth: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(unused); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the options' socket %s was created beside the given listeners (%v)", unused, err)
	}
	c := dialRaw(t, path)
	c.expect([]step{{[]string{"SET", "k", "v"}, "+OK"}, {[]string{"GET", "k"}, "$v"}})
	nc, err := net.Dial("tcp", tl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	tc := &rawConn{t: t, nc: nc, rd: newTestReplyReader(nc)}
	tc.expect([]step{{[]string{"GET", "k"}, "-NOAUTH Authentication required."},
		{[]string{"AUTH", "pw"}, "+OK"}, {[]string{"GET", "k"}, "$v"}})
	if got := len(s.Addrs()); got != 2 {
		t.Errorf("Addrs: %d listeners, want 2", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", tl.Addr().String()); err == nil {
		t.Error("the given TCP listener still accepts after Close")
	}
}

// TestListenersValidate: a nil listener and one requiring AUTH without
// requirepass are refused, with the rest (S30).
func TestListenersValidate(t *testing.T) {
	o := Options{Listeners: []Listener{{}, {Listener: dummyListener{}, RequireAuth: true}}}
	o.EnsureDefaults()
	err := o.Validate()
	if err == nil {
		t.Fatal("Validate accepted a nil listener and an AUTH listener without requirepass")
	}
	for _, want := range []string{"listener 0 is nil", "listener 1 (dummy) requires AUTH but requirepass is empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %q", err, want)
		}
	}
	if o.UnixSocket != "" {
		t.Errorf("EnsureDefaults set UnixSocket %q beside given listeners", o.UnixSocket)
	}
}

type dummyListener struct{ net.Listener }

func (dummyListener) Addr() net.Addr { return dummyAddr{} }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "dummy" }
func (dummyAddr) String() string  { return "dummy" }
