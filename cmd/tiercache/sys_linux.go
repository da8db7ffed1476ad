package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal (TCGETS succeeds).
func isTerminal(f interface{ Fd() uintptr }) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// terminalWidth is f's terminal's columns (TIOCGWINSZ), 0 when unknown.
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// checkPassedSocket tells what a descriptor passed by systemd is: a
// listening stream socket, Unix (tcp false) or TCP over IPv4 or IPv6 (tcp
// true); anything else is an error saying what it is instead.
func checkPassedSocket(fd int) (tcp bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, fmt.Errorf("fstat: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return false, fmt.Errorf("is %s, not a socket", fileKind(st.Mode))
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return false, fmt.Errorf("getsockopt SO_TYPE: %w", err)
	}
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return false, fmt.Errorf("getsockopt SO_DOMAIN: %w", err)
	}
	switch domain {
	case unix.AF_UNIX:
	case unix.AF_INET, unix.AF_INET6:
		tcp = true
	default:
		return false, fmt.Errorf("is a socket of address family %d, not a Unix or TCP socket", domain)
	}
	if typ != unix.SOCK_STREAM {
		return false, fmt.Errorf("is %s %s socket, not a stream socket (ListenStream= in the .socket unit)", familyWord(domain), sockTypeName(typ))
	}
	listening, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err != nil {
		return false, fmt.Errorf("getsockopt SO_ACCEPTCONN: %w", err)
	}
	if listening != 1 {
		return false, fmt.Errorf("is %s stream socket that is not listening (Accept=no in the .socket unit passes the listening socket)", familyWord(domain))
	}
	return tcp, nil
}

func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a pipe"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	}
	return fmt.Sprintf("a file of type %#o", mode&unix.S_IFMT)
}

func familyWord(domain int) string {
	switch domain {
	case unix.AF_INET:
		return "an IPv4"
	case unix.AF_INET6:
		return "an IPv6"
	}
	return "a Unix"
}

func sockTypeName(typ int) string {
	switch typ {
	case unix.SOCK_DGRAM:
		return "datagram (SOCK_DGRAM)"
	case unix.SOCK_SEQPACKET:
		return "SOCK_SEQPACKET"
	case unix.SOCK_RAW:
		return "SOCK_RAW"
	}
	return fmt.Sprintf("type %d", typ)
}
