package readpath

import "unsafe"

// aligned reports whether b is not empty and starts at a multiple of a (a
// power of two) in memory: O_DIRECT's buffer alignment.
func aligned(b []byte, a int) bool {
	return len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))&uintptr(a-1) == 0
}
