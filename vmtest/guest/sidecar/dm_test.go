package sidecar

import (
	bin "encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Device-mapper from its ioctl interface, without dmsetup (the guest has
// no libdevmapper): struct dm_ioctl and struct dm_target_spec as in
// include/uapi/linux/dm-ioctl.h, commands as drivers/md/dm-ioctl.c reads
// them (populate_table, next_target). Little-endian: the guest is x86-64.
const (
	dmIoctlSize   = 312 // sizeof(struct dm_ioctl)
	dmNameOff     = 48  // name[DM_NAME_LEN = 128]
	dmTargetSize  = 40  // sizeof(struct dm_target_spec)
	dmBufSize     = 4096
	dmSuspendFlag = 1 << 1 // DM_SUSPEND_FLAG

	// _IOWR(DM_IOCTL = 0xfd, cmd, struct dm_ioctl): 3<<30 | 312<<16 | 0xfd<<8 | cmd.
	dmIoctlBase = 0xC138FD00
	dmDevCreate = dmIoctlBase | 3  // DM_DEV_CREATE_CMD
	dmDevRemove = dmIoctlBase | 4  // DM_DEV_REMOVE_CMD
	dmSuspend   = dmIoctlBase | 6  // DM_DEV_SUSPEND_CMD (also resume, without DM_SUSPEND_FLAG)
	dmTableLoad = dmIoctlBase | 9  // DM_TABLE_LOAD_CMD
	dmTargetMsg = dmIoctlBase | 14 // DM_TARGET_MSG_CMD
)

// dmTarget is one line of a device-mapper table.
type dmTarget struct {
	start, length uint64 // 512-byte sectors
	typ, params   string // "linear", "flakey", "error"; the target's arguments
}

// dmDevice is a mapped device made by the test, with its own block node.
type dmDevice struct {
	name, node string
	ctl        int // /dev/mapper/control
}

// dmIoctl sends one command for d with the given flags and targets.
func (d *dmDevice) ioctl(cmd uintptr, flags uint32, targets []dmTarget) ([]byte, error) {
	buf := make([]byte, dmBufSize)
	le := bin.LittleEndian
	le.PutUint32(buf[0:], 4) // version 4.0.0: any 4.x kernel accepts it
	le.PutUint32(buf[12:], dmBufSize)
	le.PutUint32(buf[16:], dmIoctlSize) // data_start
	le.PutUint32(buf[20:], uint32(len(targets)))
	le.PutUint32(buf[28:], flags)
	copy(buf[dmNameOff:dmNameOff+127], d.name)
	off := dmIoctlSize
	for _, tg := range targets {
		n := dmTargetSize + len(tg.params) + 1
		n = (n + 7) &^ 7 // the next spec is 8-byte aligned (next_target)
		if off+n > dmBufSize {
			return nil, fmt.Errorf("dm table for %s does not fit %d bytes", d.name, dmBufSize)
		}
		le.PutUint64(buf[off:], tg.start)
		le.PutUint64(buf[off+8:], tg.length)
		le.PutUint32(buf[off+20:], uint32(n)) // next: from this spec to the next
		copy(buf[off+24:off+40], tg.typ)
		copy(buf[off+dmTargetSize:], tg.params)
		off += n
	}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(d.ctl), cmd, uintptr(unsafe.Pointer(&buf[0])))
	if e != 0 {
		return nil, fmt.Errorf("dm ioctl %#x on %s: %w", cmd, d.name, e)
	}
	return buf, nil
}

// newDM creates the mapped device name with table and resumes it; its
// block device node is made at node. Cleanup removes both.
func newDM(t *testing.T, name, node string, table []dmTarget) *dmDevice {
	t.Helper()
	ctl, err := unix.Open("/dev/mapper/control", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/mapper/control (dm-mod loaded?): %v", err)
	}
	d := &dmDevice{name: name, node: node, ctl: ctl}
	buf, err := d.ioctl(dmDevCreate, 0, nil)
	if err != nil {
		unix.Close(ctl)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Remove(node)
		if _, err := d.ioctl(dmDevRemove, 0, nil); err != nil {
			t.Errorf("remove dm device: %v", err)
		}
		unix.Close(ctl)
	})
	// dev is huge_encode_dev(disk_devt): the encoding unix.Major/Minor read.
	dev := bin.LittleEndian.Uint64(buf[40:])
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(unix.Major(dev), unix.Minor(dev)))); err != nil {
		t.Fatalf("mknod %s: %v", node, err)
	}
	d.swap(t, table)
	return d
}

// swap loads table into the inactive slot, suspends the device (waiting
// for its I/O in flight) and resumes it, which makes that table live: the
// same steps as dmsetup load, suspend, resume.
func (d *dmDevice) swap(t *testing.T, table []dmTarget) {
	t.Helper()
	if _, err := d.ioctl(dmTableLoad, 0, table); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ioctl(dmSuspend, dmSuspendFlag, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ioctl(dmSuspend, 0, nil); err != nil {
		t.Fatal(err)
	}
}

// newLoop attaches a loop device to a sparse file of size bytes and
// returns its node and major:minor. Cleanup detaches it.
func newLoop(t *testing.T, file string, size int64) (string, uint32, uint32) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	ctl, err := unix.Open("/dev/loop-control", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/loop-control (loop loaded?): %v", err)
	}
	n, err := unix.IoctlRetInt(ctl, unix.LOOP_CTL_GET_FREE)
	unix.Close(ctl)
	if err != nil {
		t.Fatalf("LOOP_CTL_GET_FREE: %v", err)
	}
	node := fmt.Sprintf("/dev/loop%d", n)
	lfd, err := unix.Open(node, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetInt(lfd, unix.LOOP_SET_FD, int(f.Fd())); err != nil {
		unix.Close(lfd)
		t.Fatalf("LOOP_SET_FD %s: %v", node, err)
	}
	t.Cleanup(func() {
		if err := unix.IoctlSetInt(lfd, unix.LOOP_CLR_FD, 0); err != nil {
			t.Errorf("LOOP_CLR_FD %s: %v", node, err)
		}
		unix.Close(lfd)
		os.Remove(file)
	})
	var st unix.Stat_t
	if err := unix.Fstat(lfd, &st); err != nil {
		t.Fatal(err)
	}
	return node, unix.Major(st.Rdev), unix.Minor(st.Rdev)
}

// faultDisk is a dm device over a loop device over a sparse file, its
// table linear until a test swaps it.
type faultDisk struct {
	*dmDevice
	loop         string
	major, minor uint32
	sectors      uint64 // 512-byte sectors
}

const faultDiskBytes = 128 << 20

func newFaultDisk(t *testing.T, dir, name string) *faultDisk {
	t.Helper()
	f := &faultDisk{sectors: faultDiskBytes / 512}
	f.loop, f.major, f.minor = newLoop(t, filepath.Join(dir, name+".img"), faultDiskBytes)
	f.dmDevice = newDM(t, name, filepath.Join(dir, name), f.linear())
	return f
}

// linearFrom maps sectors [start, end) to the same sectors of the loop
// device.
func (f *faultDisk) linearFrom(start uint64) dmTarget {
	return dmTarget{start, f.sectors - start, "linear", fmt.Sprintf("%d:%d %d", f.major, f.minor, start)}
}

func (f *faultDisk) linear() []dmTarget { return []dmTarget{f.linearFrom(0)} }

// flakey is dm-flakey over the whole device, up 0 s and down 3600 s: down
// from the start (drivers/md/dm-flakey.c), with the given features
// ("1 error_writes", "1 drop_writes").
func (f *faultDisk) flakey(features string) []dmTarget {
	return []dmTarget{{0, f.sectors, "flakey", fmt.Sprintf("%d:%d 0 0 3600 %s", f.major, f.minor, features)}}
}

// message sends msg to the target at sector 0 of d (DM_TARGET_MSG_CMD:
// struct dm_target_msg, a u64 sector then the NUL-terminated text, at
// data_start; dm-ioctl.c target_message), as dmsetup message does.
func (d *dmDevice) message(t *testing.T, msg string) {
	t.Helper()
	buf := make([]byte, dmBufSize)
	le := bin.LittleEndian
	le.PutUint32(buf[0:], 4)
	le.PutUint32(buf[12:], dmBufSize)
	le.PutUint32(buf[16:], dmIoctlSize)
	copy(buf[dmNameOff:dmNameOff+127], d.name)
	copy(buf[dmIoctlSize+8:], msg) // sector 0, then the message
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(d.ctl), dmTargetMsg, uintptr(unsafe.Pointer(&buf[0])))
	if e != 0 {
		t.Fatalf("dm message %q to %s: %v", msg, d.name, e)
	}
}

// thinDisk is a thin device of virtualBytes over a thin pool whose data
// device holds only poolBytes, with error_if_no_space: a write that needs
// a block the pool does not have fails at once with ENOSPC
// (Documentation/admin-guide/device-mapper/thin-provisioning.rst;
// drivers/md/dm-thin.c), where a file system that fills up cannot reach a
// store whose blocks are reserved (nvmekv/emu E14).
type thinDisk struct {
	*dmDevice
	pool *dmDevice
}

func newThinDisk(t *testing.T, dir string, poolBytes, virtualBytes int64) *thinDisk {
	t.Helper()
	_, mmaj, mmin := newLoop(t, filepath.Join(dir, "thin-meta.img"), 8<<20)
	_, dmaj, dmin := newLoop(t, filepath.Join(dir, "thin-data.img"), poolBytes)
	const block = 128 // sectors: 64 KiB data blocks
	pool := newDM(t, "tcpool", filepath.Join(dir, "tcpool"), []dmTarget{{0, uint64(poolBytes / 512), "thin-pool",
		fmt.Sprintf("%d:%d %d:%d %d 0 2 skip_block_zeroing error_if_no_space", mmaj, mmin, dmaj, dmin, block)}})
	pool.message(t, "create_thin 0")
	var st unix.Stat_t
	if err := unix.Stat(pool.node, &st); err != nil {
		t.Fatal(err)
	}
	thin := newDM(t, "tcthin", filepath.Join(dir, "tcthin"), []dmTarget{{0, uint64(virtualBytes / 512), "thin",
		fmt.Sprintf("%d:%d 0", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))}})
	return &thinDisk{dmDevice: thin, pool: pool}
}
