package hll

// The dense encoding (hyperloglog.c, "Dense representation"): 16384
// 6-bit registers packed from the least significant bit of each byte
// upwards, register i at bit 6*i of the bytes after the header.

// denseGet is register i of the dense registers regs (past the header).
// The last register ends inside the last byte: the byte after it, which
// Redis reads from its string's terminator, contributes no bit.
func denseGet(regs []byte, i int) uint8 {
	bit := i * registerBits
	b, fb := bit>>3, uint(bit&7)
	v := uint(regs[b]) >> fb
	if b+1 < len(regs) {
		v |= uint(regs[b+1]) << (8 - fb)
	}
	return uint8(v & registerMax)
}

// denseSet sets register i of regs to val (at most registerMax).
func denseSet(regs []byte, i int, val uint8) {
	bit := i * registerBits
	b, fb := bit>>3, uint(bit&7)
	regs[b] &^= byte(registerMax << fb)
	regs[b] |= byte(uint(val) << fb)
	if b+1 < len(regs) {
		regs[b+1] &^= byte(registerMax >> (8 - fb))
		regs[b+1] |= byte(uint(val) >> (8 - fb))
	}
}

// denseRaise sets register i to count if that is more than it holds,
// and reports whether it did (hllDenseSet).
func denseRaise(regs []byte, i int, count uint8) bool {
	if count <= denseGet(regs, i) {
		return false
	}
	denseSet(regs, i, count)
	return true
}

// denseHisto adds the dense registers' values to hist.
func denseHisto(regs []byte, hist *[64]int) {
	for i := range numRegisters {
		hist[denseGet(regs, i)]++
	}
}
