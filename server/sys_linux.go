package server

import "syscall"

// setUmask sets the process umask and returns the previous one (umask(2)
// cannot fail).
func setUmask(mask int) int { return syscall.Umask(mask) }
