package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// umaskMu serialises the umask dance of listenUnix within this process.
var umaskMu sync.Mutex

// listenUnix listens on path with the file created with exactly mode (the
// umask is narrowed around bind, so there is no window with wider
// permissions), then chowns it to gid when gid > 0. An existing socket
// file is removed only when nothing accepts on it (connect fails with
// ECONNREFUSED); a live server's socket, or anything that is not a socket,
// is left alone and reported.
func listenUnix(path string, mode fs.FileMode, gid int) (*net.UnixListener, error) {
	if err := removeStale(path); err != nil {
		return nil, err
	}
	umaskMu.Lock()
	old := setUmask(int(^mode & 0o777))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	setUmask(old)
	umaskMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("server: listen on unix socket %s: %w", path, err)
	}
	if gid > 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			l.Close()
			return nil, fmt.Errorf("server: chown unix socket %s to group %d: %w", path, gid, err)
		}
	}
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, fmt.Errorf("server: chmod unix socket %s to %o: %w", path, mode, err)
	}
	return l, nil
}

func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("server: stat unix socket %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%w: %s (%v)", ErrNotSocket, path, fi.Mode().Type())
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("%w: %s", ErrSocketInUse, path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		// EACCES, EAGAIN (backlog full), timeout...: it may be live; leave it.
		return fmt.Errorf("%w: %s: probe: %w", ErrSocketInUse, path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("server: remove stale unix socket %s: %w", path, err)
	}
	return nil
}
