package tier

import "unsafe"

// viewString returns a string sharing b's bytes, for map lookups and for
// ristretto, which only hashes the key and never retains it. b must not be
// modified while the string is in use.
func viewString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
