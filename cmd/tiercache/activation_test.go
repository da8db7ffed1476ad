package main

import (
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestParseListenEnv (C12): the socket-activation environment is read as
// sd_listen_fds(3) defines it, and every malformed or foreign value is an
// error naming the variable.
func TestParseListenEnv(t *testing.T) {
	const pid = 4242
	for _, tc := range []struct {
		name    string
		env     map[string]string
		fds     []int
		names   []string
		wantErr []string
	}{
		{name: "none"},
		{name: "one", env: map[string]string{"LISTEN_PID": "4242", "LISTEN_FDS": "1"}, fds: []int{3}, names: []string{""}},
		{name: "named", env: map[string]string{"LISTEN_PID": "4242", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "tiercache.socket:tcp"},
			fds: []int{3, 4}, names: []string{"tiercache.socket", "tcp"}},
		{name: "malformed count", env: map[string]string{"LISTEN_PID": "4242", "LISTEN_FDS": "two"},
			wantErr: []string{`LISTEN_FDS="two" is not a positive number of descriptors`}},
		{name: "zero", env: map[string]string{"LISTEN_PID": "4242", "LISTEN_FDS": "0"},
			wantErr: []string{`LISTEN_FDS="0" is not a positive number`}},
		{name: "negative", env: map[string]string{"LISTEN_PID": "4242", "LISTEN_FDS": "-3"},
			wantErr: []string{`LISTEN_FDS="-3"`}},
		{name: "another process", env: map[string]string{"LISTEN_PID": "1", "LISTEN_FDS": "1"},
			wantErr: []string{"LISTEN_PID=1 is not this process (4242)", "unset LISTEN_PID and LISTEN_FDS"}},
		{name: "pid not a number", env: map[string]string{"LISTEN_PID": "me", "LISTEN_FDS": "1"},
			wantErr: []string{`LISTEN_PID="me" is not a process id`}},
		{name: "no pid", env: map[string]string{"LISTEN_FDS": "1"},
			wantErr: []string{`LISTEN_PID is not set beside LISTEN_FDS="1"`}},
		{name: "names mismatch", env: map[string]string{"LISTEN_PID": "4242", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "a:b:c"},
			wantErr: []string{`LISTEN_FDNAMES="a:b:c" names 3 descriptors, LISTEN_FDS says 2`}},
		{name: "everything wrong", env: map[string]string{"LISTEN_PID": "7", "LISTEN_FDS": "x"},
			wantErr: []string{"LISTEN_PID=7", `LISTEN_FDS="x"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parseListenEnv(func(k string) string { return tc.env[k] }, pid)
			if len(tc.wantErr) > 0 {
				if err == nil || !errors.Is(err, errActivation) {
					t.Fatalf("err %v, want errActivation", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%v lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.fds == nil {
				if p != nil {
					t.Fatalf("%+v without any variable set", p)
				}
				return
			}
			if len(p.fds) != len(tc.fds) || p.fds[0] != tc.fds[0] || strings.Join(p.names, ":") != strings.Join(tc.names, ":") {
				t.Errorf("got fds %v names %q, want %v %q", p.fds, p.names, tc.fds, tc.names)
			}
		})
	}
}

// TestCheckPassedSocket (C12): a passed descriptor is served only if it is
// a listening stream socket, Unix or TCP; everything else says what it is.
func TestCheckPassedSocket(t *testing.T) {
	fileOf := func(f interface{ File() (*os.File, error) }) *os.File {
		t.Helper()
		fd, err := f.File()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fd.Close() })
		return fd
	}
	ul, err := net.Listen("unix", shortSocket(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(pair[0])
	defer syscall.Close(pair[1])
	reg, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()

	for _, tc := range []struct {
		name    string
		fd      int
		tcp     bool
		wantErr string
	}{
		{"unix listener", int(fileOf(ul.(*net.UnixListener)).Fd()), false, ""},
		{"tcp listener", int(fileOf(tl.(*net.TCPListener)).Fd()), true, ""},
		{"udp", int(fileOf(udp.(*net.UDPConn)).Fd()), false, "is an IPv4 datagram (SOCK_DGRAM) socket, not a stream socket"},
		{"unix not listening", pair[0], false, "is a Unix stream socket that is not listening"},
		{"regular file", int(reg.Fd()), false, "is a regular file, not a socket"},
		{"pipe", int(pr.Fd()), false, "is a pipe, not a socket"},
	} {
		tcp, err := checkPassedSocket(tc.fd)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr == "" && tcp != tc.tcp:
			t.Errorf("%s: tcp %v, want %v", tc.name, tcp, tc.tcp)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.wantErr)
		}
	}
}
