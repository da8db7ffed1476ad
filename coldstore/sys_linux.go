package coldstore

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockInUse takes an exclusive flock on path+".inuse" without waiting:
// a running store holds it, so `tiercache tenant drop` does not delete a
// namespace under it. It returns the release.
func lockInUse(path string) (func(), error) {
	p := path + ".inuse"
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("coldstore: %w", err)
	}
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("coldstore: open %s: %w", p, err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		if err == unix.EWOULDBLOCK {
			return nil, fmt.Errorf("%w: %s is locked: a running sidecar uses these namespaces", ErrInUse, p)
		}
		return nil, fmt.Errorf("coldstore: lock %s: %w", p, err)
	}
	return func() { unix.Flock(fd, unix.LOCK_UN); unix.Close(fd) }, nil
}
