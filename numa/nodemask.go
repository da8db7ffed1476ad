package numa

import (
	"math/bits"
	"unsafe"
)

// nodemask is the kernel's unsigned long bitmap of node ids. The kernel
// reads maxnode-1 bits (mm/mempolicy.c get_nodes; verified: maxnode=1 with
// mask 1 is EINVAL), so ptr reports 64*len+1.
type nodemask []uint64

func maskOf(nodes ...int) nodemask {
	hi := 0
	for _, n := range nodes {
		hi = max(hi, n)
	}
	m := make(nodemask, hi/64+1)
	for _, n := range nodes {
		m[n/64] |= 1 << (uint(n) % 64)
	}
	return m
}

func (m nodemask) ptr() (unsafe.Pointer, uintptr) {
	if len(m) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(&m[0]), uintptr(64*len(m) + 1)
}

func (m nodemask) nodes() []int {
	var out []int
	for w, word := range m {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, w*64+b)
			word &^= 1 << uint(b)
		}
	}
	return out
}

func (m nodemask) has(n int) bool {
	return n >= 0 && n/64 < len(m) && m[n/64]&(1<<(uint(n)%64)) != 0
}
