package server

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// reservedFds is what capConns keeps free of the file-descriptor limit
// besides the descriptors already open at New (the store, the io_uring
// ring, log files): listeners, the spare descriptor, metrics connections,
// the checkpoint written at close. redis-server reserves 32 likewise
// (server.h: CONFIG_MIN_RESERVED_FDS).
const reservedFds = 32

// capConns lowers maxConns to what the soft RLIMIT_NOFILE leaves for client
// connections once the descriptors open now and reservedFds are set
// aside, as redis-server's adjustOpenFilesLimit does, and logs it. (The Go
// runtime has already raised the soft limit to the hard one.) It returns
// maxConns unchanged when the limit cannot be read.
func capConns(maxConns int, log *zap.Logger) int {
	limit, err := fileLimit()
	if err != nil {
		log.Warn("cannot read the open files limit; maxclients left as configured", zap.Error(err))
		return maxConns
	}
	open, err := openFiles()
	if err != nil {
		log.Warn("cannot count open files; maxclients left as configured", zap.Error(err))
		return maxConns
	}
	room := int64(limit) - int64(open) - reservedFds
	if room >= int64(maxConns) {
		return maxConns
	}
	capped := int(max(room, 1))
	log.Warn("maxclients lowered to what the open files limit allows (raise it with ulimit -n or LimitNOFILE=)",
		zap.Int("configured", maxConns), zap.Int("maxclients", capped), zap.Uint64("nofile_limit", limit),
		zap.Int("open_files", open), zap.Int("reserved", reservedFds))
	return capped
}

// fdExhausted reports an accept that failed for want of a file descriptor.
func fdExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// spareFd is one descriptor held open so that, when the process runs out
// of them, the listener can still take a waiting client and tell it why it
// is refused instead of leaving it hanging in the backlog: close the spare,
// accept, reopen the spare, answer.
type spareFd struct {
	mu sync.Mutex
	fd int // -1: none held
}

func newSpareFd() *spareFd {
	fd, err := openSpare()
	if err != nil {
		fd = -1
	}
	return &spareFd{fd: fd}
}

// spareWait bounds how long acceptSpare waits for a client. Linux's
// accept(2) takes the descriptor before it looks at the backlog, so while
// none is free every accept fails at once, client or not: this wait is
// what keeps the accept loop from spinning.
const spareWait = 100 * time.Millisecond

// acceptSpare accepts on l with the spare's descriptor, waiting at most
// spareWait for a client. A client taken while descriptors are still
// exhausted (the spare cannot be reopened) is refused with refuse;
// one taken once they are free again is returned to be served. It reports
// false when there is no spare to use (the caller backs off).
func (sp *spareFd) acceptSpare(l net.Listener, refuse func(net.Conn)) (net.Conn, bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.fd < 0 {
		if fd, err := openSpare(); err == nil {
			sp.fd = fd
		}
		return nil, false
	}
	closeFd(sp.fd)
	sp.fd = -1
	if dl, ok := l.(interface{ SetDeadline(time.Time) error }); ok {
		dl.SetDeadline(time.Now().Add(spareWait))
		defer dl.SetDeadline(time.Time{})
	}
	nc, err := l.Accept()
	fd, ferr := openSpare()
	if ferr == nil {
		sp.fd = fd
	}
	switch {
	case err != nil:
		return nil, true
	case ferr != nil:
		refuse(nc) // closing it frees the spare's descriptor again
		if fd, err := openSpare(); err == nil {
			sp.fd = fd
		}
		return nil, true
	}
	return nc, true
}

func (sp *spareFd) close() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.fd >= 0 {
		closeFd(sp.fd)
		sp.fd = -1
	}
}
