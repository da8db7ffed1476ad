package tier

import "fmt"

// checkExpiryIndex reports how sh's expiry index breaks T55 (sh.mu held):
// every live entry of the map with an expiry (before 2262) is filed
// once, in a wheel slot visited no later than its expiry's tick, or in
// late, which the next sweep takes; nothing else is filed, and every
// other slot handed out is on the free list. Not while a sweep is
// between batches.
func (sh *shard) checkExpiryIndex() error {
	want := 0
	x := sh.exps
	for k, e := range sh.m {
		filed := x != nil && x.slotOf(e) != 0
		switch {
		case e.indexed() && !filed:
			return fmt.Errorf("T55: live entry of %q with an expiry is not in the expiry index", k)
		case !e.indexed() && filed:
			return fmt.Errorf("T55: entry of %q (%v, expiry %d) is in the expiry index", k, e.state, e.exp)
		case filed:
			want++
		}
	}
	if x == nil {
		return nil
	}
	if !x.empty(headDue) {
		return fmt.Errorf("T55: entries left due outside a sweep")
	}
	got := 0
	walk := func(h uint32, visit int64) error {
		for i := x.link(h).next; i != h; i = x.link(i).next {
			got++
			e := x.ent(i)
			switch {
			case e == nil || e.expSlot() != i:
				return fmt.Errorf("T55: slot %d of the expiry index is linked and names no entry filed there", i)
			case sh.m[e.key] != e:
				return fmt.Errorf("T55: the expiry index holds an entry of %q not in the map", e.key)
			case visit > tickOf(e.exp):
				return fmt.Errorf("T55: entry of %q expiring at tick %d is in a slot visited at tick %d", e.key, tickOf(e.exp), visit)
			}
		}
		return nil
	}
	if err := walk(headLate, 0); err != nil {
		return err
	}
	for level := range wheelLevels {
		span := int64(1) << uint(level*wheelBits)
		for s := range int64(wheelSlots) {
			// The first tick at or after cur at which this slot is visited.
			first := (x.cur + span - 1) / span
			first += (s - first) & wheelMask
			if err := walk(head(level, s), first*span); err != nil {
				return err
			}
		}
	}
	if got != want {
		return fmt.Errorf("T55: the expiry index links %d entries, the map has %d live ones with an expiry", got, want)
	}
	// Every slot handed out is an entry's or free: none leaked, none
	// freed twice.
	free := uint32(0)
	for i := x.free; i != 0; i = x.link(i).next {
		if free++; x.ent(i) != nil || free > x.used-firstFree {
			return fmt.Errorf("T55: the expiry index's free list holds slot %d, an entry's, or loops", i)
		}
	}
	if int(x.n) != got || x.n+free != x.used-firstFree {
		return fmt.Errorf("T55: the expiry index counts %d entries and links %d, with %d slots free of %d handed out", x.n, got, free, x.used-firstFree)
	}
	return nil
}
