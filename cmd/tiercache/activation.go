package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/tiercache/tiercache/server"
)

// listenFdsStart is the first descriptor systemd passes (SD_LISTEN_FDS_START
// in sd-daemon.h; sd_listen_fds(3)).
const listenFdsStart = 3

// The environment of socket activation (sd_listen_fds(3)).
const (
	envListenPID     = "LISTEN_PID"
	envListenFDs     = "LISTEN_FDS"
	envListenFDNames = "LISTEN_FDNAMES"
)

// tcpFdName is the LISTEN_FDNAMES entry (FileDescriptorName= in a .socket
// unit) that makes a passed TCP socket the AUTH-only TCP listener.
const tcpFdName = "tcp"

// passedFds is what LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES say: the
// descriptors from listenFdsStart on and their names.
type passedFds struct {
	fds   []int
	names []string // one per fd; "" when LISTEN_FDNAMES is unset
}

// parseListenEnv reads the socket-activation environment as
// sd_listen_fds(3) defines it, but strictly: none of the three set means
// no activation (nil, nil); anything malformed, a count of names that
// does not match, or a LISTEN_PID that is not pid (the sockets were meant
// for another process, e.g. a wrapper that forked instead of exec'ing) is
// an error naming the variable, where sd_listen_fds would silently serve
// nothing (C12).
func parseListenEnv(getenv func(string) string, pid int) (*passedFds, error) {
	pidS, fdsS, namesS := getenv(envListenPID), getenv(envListenFDs), getenv(envListenFDNames)
	if pidS == "" && fdsS == "" && namesS == "" {
		return nil, nil
	}
	var errs []error
	switch p, err := strconv.Atoi(pidS); {
	case pidS == "":
		errs = append(errs, fmt.Errorf("%s is not set beside %s=%q", envListenPID, envListenFDs, fdsS))
	case err != nil || p <= 0:
		errs = append(errs, fmt.Errorf("%s=%q is not a process id", envListenPID, pidS))
	case p != pid:
		errs = append(errs, fmt.Errorf("%s=%d is not this process (%d): the sockets were passed to another process "+
			"(a wrapper that forks instead of exec'ing?); unset %s and %s to run without them", envListenPID, p, pid, envListenPID, envListenFDs))
	}
	n, err := strconv.Atoi(fdsS)
	if err != nil || n < 1 {
		errs = append(errs, fmt.Errorf("%s=%q is not a positive number of descriptors", envListenFDs, fdsS))
		n = 0
	}
	p := &passedFds{names: make([]string, n)}
	for i := range n {
		p.fds = append(p.fds, listenFdsStart+i)
	}
	if namesS != "" && n > 0 {
		names := strings.Split(namesS, ":")
		if len(names) != n {
			errs = append(errs, fmt.Errorf("%s=%q names %d descriptors, %s says %d", envListenFDNames, namesS, len(names), envListenFDs, n))
		} else {
			p.names = names
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", errActivation, errors.Join(errs...))
	}
	return p, nil
}

// activation is the listening sockets systemd passed: at most one Unix
// socket, and at most one TCP socket, named tcp.
type activation struct {
	unix, tcp net.Listener
}

// takeListeners checks each passed descriptor (a listening stream socket:
// Unix, or TCP named tcp) and makes listeners of them; the descriptors
// themselves are closed (the listeners hold duplicates, close-on-exec).
// On an error every descriptor and listener is closed.
func takeListeners(p *passedFds) (*activation, error) {
	a := &activation{}
	var errs []error
	for i, fd := range p.fds {
		name := p.names[i]
		ln, tcp, err := listenerOf(fd, name)
		switch {
		case err != nil:
			errs = append(errs, err)
		case tcp && a.tcp != nil, !tcp && a.unix != nil:
			ln.Close()
			errs = append(errs, fmt.Errorf("fd %d%s: a second %s socket; tiercache serves one Unix socket and one TCP socket", fd, fdLabel(name), kindWord(tcp)))
		case tcp:
			a.tcp = ln
		default:
			a.unix = ln
		}
	}
	if len(errs) > 0 {
		a.close()
		return nil, fmt.Errorf("%w: %w", errActivation, errors.Join(errs...))
	}
	return a, nil
}

// listenerOf makes a listener of one passed descriptor after checking what
// it is (checkPassedSocket); fd is closed either way.
func listenerOf(fd int, name string) (net.Listener, bool, error) {
	f := os.NewFile(uintptr(fd), fmt.Sprintf("LISTEN_FDS[%d]", fd-listenFdsStart))
	if f == nil {
		return nil, false, fmt.Errorf("fd %d%s: not an open descriptor", fd, fdLabel(name))
	}
	defer f.Close()
	tcp, err := checkPassedSocket(fd)
	if err != nil {
		return nil, false, fmt.Errorf("fd %d%s: %w", fd, fdLabel(name), err)
	}
	if tcp && name != tcpFdName {
		return nil, false, fmt.Errorf("fd %d%s is a TCP socket: name it %s (FileDescriptorName=%s in the .socket unit) to serve it as the "+
			"TCP listener, whose clients must AUTH", fd, fdLabel(name), tcpFdName, tcpFdName)
	}
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, false, fmt.Errorf("fd %d%s: %w", fd, fdLabel(name), err)
	}
	return ln, tcp, nil
}

func fdLabel(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(" (named %q)", name)
}

func kindWord(tcp bool) string {
	if tcp {
		return "TCP"
	}
	return "Unix"
}

func (a *activation) close() {
	for _, l := range []net.Listener{a.unix, a.tcp} {
		if l != nil {
			l.Close()
		}
	}
}

// apply makes the server serve the passed sockets instead of its own:
// server.socket and server.tcp are not opened, and name the passed ones in
// INFO and CONFIG GET. A passed TCP socket needs server.requirepass.
func (a *activation) apply(o *server.Options) error {
	if a.tcp != nil && o.RequirePass == "" {
		return fmt.Errorf("%w: the TCP socket passed as %s (%s) needs server.requirepass: TCP clients must AUTH", errActivation, tcpFdName, a.tcp.Addr())
	}
	o.Listeners, o.UnixSocket, o.TCPAddr = nil, "", ""
	if a.unix != nil {
		o.Listeners = append(o.Listeners, server.Listener{Listener: a.unix, RequireAuth: o.UnixRequireAuth})
		o.UnixSocket = a.unix.Addr().String()
	}
	if a.tcp != nil {
		o.Listeners = append(o.Listeners, server.Listener{Listener: a.tcp, RequireAuth: true})
		o.TCPAddr = a.tcp.Addr().String()
	}
	return nil
}

// socketActivation takes the sockets systemd passed to this process, if
// any, and unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES so that
// nothing started later inherits them (sd_listen_fds' unset_environment).
func socketActivation() (*activation, error) {
	p, err := parseListenEnv(os.Getenv, os.Getpid())
	for _, k := range []string{envListenPID, envListenFDs, envListenFDNames} {
		os.Unsetenv(k)
	}
	if p == nil || err != nil {
		return nil, err
	}
	return takeListeners(p)
}
