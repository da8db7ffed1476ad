package tier

import "testing"

// TestSizeSlotPacking (T55): an entry's value size and its slot in the
// expiry index share one word and never change each other, at the
// largest value Options allows (1 GiB) and beyond, and at the last slot.
func TestSizeSlotPacking(t *testing.T) {
	if int64(1<<30) > sizeMask {
		t.Fatalf("a value of 1 GiB (Options.MaxValue's bound) does not fit the %d bits of sizeSlot's size", sizeBits)
	}
	for _, size := range []int64{0, 1, 512 << 20, 1 << 30, sizeMask} {
		for _, slot := range []uint32{0, 1, firstFree, maxSlots / 2, maxSlots - 1} {
			var e entry
			e.setValueSize(sizeMask)
			e.setExpSlot(slot)
			e.setValueSize(size)
			if e.valueSize() != size || e.expSlot() != slot {
				t.Fatalf("size %d then slot %d: read back size %d, slot %d", size, slot, e.valueSize(), e.expSlot())
			}
			e.setExpSlot(maxSlots - 1)
			e.setExpSlot(slot)
			if e.valueSize() != size || e.expSlot() != slot {
				t.Fatalf("slot %d then size %d: read back size %d, slot %d", slot, size, e.valueSize(), e.expSlot())
			}
		}
	}
}
