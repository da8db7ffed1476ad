package volume

import (
	"golang.org/x/sys/unix"
)

// lockPath takes an exclusive flock on path without waiting (the lock is
// the open file description's: the device's own descriptors do not share
// it) and returns its release; ErrBusy-worthy when another holds it
// (busy true).
func lockPath(path string) (release func(), busy bool, err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, err
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, err == unix.EWOULDBLOCK, err
	}
	return func() { unix.Flock(fd, unix.LOCK_UN); unix.Close(fd) }, false, nil
}
