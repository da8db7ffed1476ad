package nsadmin

import (
	"golang.org/x/sys/unix"

	"github.com/tiercache/tiercache/nvmekv"
)

// openCtrl opens a controller's char device for admin commands.
func openCtrl(path string) (int, error) {
	return unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
}

func closeFd(fd int) error { return unix.Close(fd) }

// nsidOf asks a namespace device its NSID (NVME_IOCTL_ID,
// include/uapi/linux/nvme_ioctl.h).
func nsidOf(path string) (uint32, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(nvmekv.NVMeIoctlID), 0)
	if e != 0 {
		return 0, e
	}
	return uint32(r), nil
}

// flockFile takes an exclusive flock on path (created if missing) and
// returns its release.
func flockFile(path string) (func(), error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return func() { unix.Flock(fd, unix.LOCK_UN); unix.Close(fd) }, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		unix.Fsync(fd)
		unix.Close(fd)
	}
}
