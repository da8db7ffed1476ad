package value

import (
	"encoding/binary"
	"testing"
)

// TestUvarintRefusesLongForms (V4): Uvarint reads every uvarint
// binary.AppendUvarint writes, and refuses the same value written with a
// continuation byte more than it needs.
func TestUvarintRefusesLongForms(t *testing.T) {
	for _, u := range []uint64{0, 1, 127, 128, 300, 1 << 32, 1<<63 - 1, 1<<64 - 1} {
		b := binary.AppendUvarint(nil, u)
		if got, w := Uvarint(b); got != u || w != len(b) {
			t.Fatalf("Uvarint(%x) = %d, %d; want %d, %d", b, got, w, u, len(b))
		}
		if len(b) == binary.MaxVarintLen64 {
			continue // no longer form exists
		}
		long := append(append([]byte(nil), b...), 0)
		long[len(b)-1] |= 0x80
		if _, w := binary.Uvarint(long); w != len(long) {
			t.Fatalf("test input %x is not a uvarint", long)
		}
		if _, w := Uvarint(long); w > 0 {
			t.Fatalf("Uvarint(%x) accepted a long form of %d", long, u)
		}
	}
}
