package vmtest

import (
	"fmt"
	"io"
	"strings"
)

// Mode bits of a cpio entry (the st_mode file-type bits of <sys/stat.h>).
const (
	ModeDir     = 0o040000
	ModeRegular = 0o100000
	ModeChar    = 0o020000
	ModeSymlink = 0o120000
)

// newcMagic and the 110-byte header come from the "new ASCII" (SVR4, no
// checksum) format the kernel unpacks: Documentation/driver-api/early-userspace/
// buffer-format.rst ("070701", thirteen 8-digit hex fields, name and data
// each padded to a multiple of 4 bytes, ended by "TRAILER!!!").
const (
	newcMagic     = "070701"
	newcHeaderLen = 110
	newcTrailer   = "TRAILER!!!"
	maxCPIOFile   = 1<<32 - 1 // the filesize field is 8 hex digits
)

// CPIOWriter writes a newc archive, the format of a Linux initramfs. It is
// not safe for concurrent use.
type CPIOWriter struct {
	w      io.Writer
	n      int64 // bytes written so far (for padding)
	ino    uint32
	closed bool
	err    error
}

// NewCPIOWriter returns a writer that appends entries to w.
func NewCPIOWriter(w io.Writer) *CPIOWriter { return &CPIOWriter{w: w, ino: 1} }

// Dir adds a directory.
func (c *CPIOWriter) Dir(name string, perm uint32) error {
	return c.entry(name, ModeDir|perm&0o7777, 2, 0, 0, nil)
}

// File adds a regular file with the given contents.
func (c *CPIOWriter) File(name string, perm uint32, data []byte) error {
	return c.entry(name, ModeRegular|perm&0o7777, 1, 0, 0, data)
}

// Symlink adds a symbolic link name -> target.
func (c *CPIOWriter) Symlink(name, target string) error {
	return c.entry(name, ModeSymlink|0o777, 1, 0, 0, []byte(target))
}

// CharDev adds a character device node (e.g. /dev/console is 5,1).
func (c *CPIOWriter) CharDev(name string, perm, major, minor uint32) error {
	return c.entry(name, ModeChar|perm&0o7777, 1, major, minor, nil)
}

// Close writes the trailer entry. It does not close the underlying writer.
// Close is idempotent.
func (c *CPIOWriter) Close() error {
	if c.closed {
		return c.err
	}
	err := c.write(newcTrailer, 0, 1, 0, 0, nil, 0)
	c.closed = true
	if c.err == nil {
		c.err = err
	}
	return c.err
}

func (c *CPIOWriter) entry(name string, mode, nlink, rmaj, rmin uint32, data []byte) error {
	if c.err != nil {
		return c.err
	}
	if c.closed {
		return fmt.Errorf("%w: %q added after Close", ErrBadCPIO, name)
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" || name == newcTrailer || strings.ContainsRune(name, 0) {
		return fmt.Errorf("%w: invalid name %q", ErrBadCPIO, name)
	}
	if int64(len(data)) > maxCPIOFile {
		return fmt.Errorf("%w: %q is %d bytes, more than the format's 4 GiB limit", ErrBadCPIO, name, len(data))
	}
	c.ino++
	if err := c.write(name, mode, nlink, rmaj, rmin, data, c.ino); err != nil {
		c.err = fmt.Errorf("vmtest: write cpio entry %q: %w", name, err)
	}
	return c.err
}

func (c *CPIOWriter) write(name string, mode, nlink, rmaj, rmin uint32, data []byte, ino uint32) error {
	// Fields in order: ino mode uid gid nlink mtime filesize devmajor
	// devminor rdevmajor rdevminor namesize check.
	hdr := fmt.Sprintf("%s%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		newcMagic, ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmaj, rmin, len(name)+1, 0)
	if len(hdr) != newcHeaderLen {
		return fmt.Errorf("%w: header of %q is %d bytes", ErrBadCPIO, name, len(hdr))
	}
	if err := c.put([]byte(hdr)); err != nil {
		return err
	}
	if err := c.put(append([]byte(name), 0)); err != nil {
		return err
	}
	if err := c.pad(); err != nil {
		return err
	}
	if err := c.put(data); err != nil {
		return err
	}
	return c.pad()
}

func (c *CPIOWriter) put(b []byte) error {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return err
}

func (c *CPIOWriter) pad() error {
	var zero [3]byte
	if r := c.n % 4; r != 0 {
		return c.put(zero[:4-r])
	}
	return nil
}
