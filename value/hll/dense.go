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

// denseFour are the four registers three bytes of the dense encoding
// hold (register 4k at bits 0-5 of byte 3k, and so on: the layout's
// "11000000|22221111|33333322").
func denseFour(b []byte) (r0, r1, r2, r3 uint8) {
	b0, b1, b2 := b[0], b[1], b[2]
	return b0 & registerMax, (b0>>6 | b1<<2) & registerMax, (b1>>4 | b2<<4) & registerMax, b2 >> 2
}

// denseHisto adds the dense registers' values to hist.
func denseHisto(regs []byte, hist *[64]int) {
	for i := 0; i+3 <= len(regs); i += 3 {
		r0, r1, r2, r3 := denseFour(regs[i : i+3])
		hist[r0]++
		hist[r1]++
		hist[r2]++
		hist[r3]++
	}
}
