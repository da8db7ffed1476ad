package policy

import "sync/atomic"

// doorkeeper is a Bloom filter (two probes) that remembers which keys were seen
// once since the last reset, so one-hit wonders never reach the counters.
type doorkeeper struct {
	bits []atomic.Uint64
	mask uint64
}

func newDoorkeeper(n int) *doorkeeper {
	words := uint64(1)
	for words*64 < uint64(n)*8 {
		words <<= 1
	}
	return &doorkeeper{bits: make([]atomic.Uint64, words), mask: words*64 - 1}
}

func (d *doorkeeper) probes(h uint64) (uint64, uint64) {
	return h & d.mask, (h >> 32) * 0x9e3779b97f4a7c15 >> 20 & d.mask
}

// test reports whether h was seen since the last clear.
func (d *doorkeeper) test(h uint64) bool {
	a, b := d.probes(h)
	return d.bits[a/64].Load()&(1<<(a%64)) != 0 && d.bits[b/64].Load()&(1<<(b%64)) != 0
}

// testAndSet records h and reports whether it was already present.
func (d *doorkeeper) testAndSet(h uint64) bool {
	a, b := d.probes(h)
	wa, wb := &d.bits[a/64], &d.bits[b/64]
	ma, mb := uint64(1)<<(a%64), uint64(1)<<(b%64)
	if wa.Load()&ma != 0 && wb.Load()&mb != 0 {
		return true // already set: no write, the cache lines stay shared
	}
	oa := wa.Or(ma)
	ob := wb.Or(mb)
	return oa&ma != 0 && ob&mb != 0
}

func (d *doorkeeper) clear() {
	for i := range d.bits {
		d.bits[i].Store(0)
	}
}
