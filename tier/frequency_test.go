package tier

import "testing"

// TestFrequencyCountsHotReads is T71: OBJECT FREQ's estimate counts a key
// read from DRAM. A key read from hot again and again is rated above a key
// written and never read, and both exist.
func TestFrequencyCountsHotReads(t *testing.T) {
	c := openMemoryTiers(t, newFakeClock())
	for _, k := range []string{"read", "idle"} {
		if _, err := c.Set([]byte(k), []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 40 {
		if _, ok, err := c.Get(nil, []byte("read")); !ok || err != nil {
			t.Fatalf("Get: %v %v", ok, err)
		}
	}
	read, ok := c.Frequency([]byte("read"))
	idle, ok2 := c.Frequency([]byte("idle"))
	if !ok || !ok2 {
		t.Fatal("Frequency: a key that exists reported absent")
	}
	if read <= idle {
		t.Errorf("Frequency of a key read 40 times from hot %d, of one never read %d", read, idle)
	}
	if _, ok := c.Frequency([]byte("absent")); ok {
		t.Error("Frequency: an absent key reported present")
	}
}
