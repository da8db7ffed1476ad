package kvtcp

import (
	"errors"
	"syscall"
)

// readKmsg returns the kernel log records in /dev/kmsg, one per read(2),
// without waiting for new ones: the fd is non-blocking and read with raw
// syscalls (an os.File would park on the poller at the end of the log).
func readKmsg() ([]string, error) {
	fd, err := syscall.Open("/dev/kmsg", syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var recs []string
	buf := make([]byte, 8192)
	for {
		n, err := syscall.Read(fd, buf)
		switch {
		case errors.Is(err, syscall.EAGAIN):
			return recs, nil
		case errors.Is(err, syscall.EPIPE): // overwritten while reading: skip on
			continue
		case err != nil:
			return recs, err
		case n == 0:
			return recs, nil
		}
		recs = append(recs, string(buf[:n]))
	}
}
