package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// envNotifySocket is where a Type=notify service's manager listens
// (sd_notify(3)): a path, or an abstract socket when it starts with '@'.
const envNotifySocket = "NOTIFY_SOCKET"

// notifier sends sd_notify(3) state lines to the service manager: READY=1
// once the cache is loaded, STATUS= while it loads and when it serves,
// EXTEND_TIMEOUT_USEC= while loading makes progress, STOPPING=1 at
// shutdown. A nil notifier (no NOTIFY_SOCKET) sends nothing. A message
// the manager does not take is dropped: the service goes on (C13).
type notifier struct {
	mu   sync.Mutex
	conn *net.UnixConn
}

// newNotifier connects to NOTIFY_SOCKET, if set, and unsets it so that
// nothing started later sends as this service (sd_notify's
// unset_environment). An address tiercache cannot send to is an error.
func newNotifier() (*notifier, error) {
	addr := os.Getenv(envNotifySocket)
	os.Unsetenv(envNotifySocket)
	return dialNotify(addr)
}

func dialNotify(addr string) (*notifier, error) {
	if addr == "" {
		return nil, nil
	}
	if !strings.HasPrefix(addr, "/") && !strings.HasPrefix(addr, "@") {
		// systemd ≥ 254 may also pass vsock:CID:PORT (a VM's manager).
		return nil, fmt.Errorf("%w: %s=%q is neither a socket path nor an abstract socket (@name)", errNotify, envNotifySocket, addr)
	}
	// net turns a leading '@' into Linux's abstract namespace.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("%w: %s=%q: %w", errNotify, envNotifySocket, addr, err)
	}
	return &notifier{conn: c}, nil
}

// send writes one datagram of newline-separated VAR=value lines.
func (n *notifier) send(lines ...string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		return
	}
	n.conn.SetWriteDeadline(time.Now().Add(time.Second)) // never hang on a manager that does not read
	n.conn.Write([]byte(strings.Join(lines, "\n")))
}

// status is a one-line STATUS= (systemctl status shows it): newlines
// would end the message's line, so they become "; ".
func status(s string) string {
	return "STATUS=" + strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")
}

// loading says how far the open got; extend, when the load made progress
// since the last call, asks the manager to wait loadExtendTimeout more
// past TimeoutStartSec.
func (n *notifier) loading(text string, extend bool) {
	if extend {
		n.send(status(text), fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d", loadExtendTimeout.Microseconds()))
		return
	}
	n.send(status(text))
}

// loadExtendTimeout is how much longer the manager waits for READY=1 each
// time the load makes progress: a load that stops making progress fails
// the start this long after its last progress, or at TimeoutStartSec.
const loadExtendTimeout = 30 * time.Second

func (n *notifier) ready(text string)    { n.send("READY=1", status(text)) }
func (n *notifier) stopping(text string) { n.send("STOPPING=1", status(text)) }
func (n *notifier) failed(err error)     { n.send(status("failed: " + err.Error())) }

func (n *notifier) close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn != nil {
		n.conn.Close()
		n.conn = nil
	}
}
