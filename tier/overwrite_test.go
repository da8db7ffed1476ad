package tier

import (
	"bytes"
	"testing"
)

// TestQuickOverwritesKeepTheLast checks T27: 1000 overwrites of a key in
// a row, growing by a byte each, leave the last value, with hot as the only
// tier (with ristretto, a Set of a key it had not applied yet was refused
// and, a third of the runs, lost).
func TestQuickOverwritesKeepTheLast(t *testing.T) {
	c, err := Open(Options{HotBytes: 8 << 20, HotMaxValue: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for round := 0; round < 20; round++ {
		key := []byte{'k', byte(round)}
		var v []byte
		for i := 0; i < 1000; i++ {
			v = append(v, 'x')
			if _, err := c.Set(key, v, SetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		got, ok, err := c.Get(nil, key)
		if err != nil || !ok || !bytes.Equal(got, v) {
			t.Fatalf("round %d: after 1000 overwrites Get = %d bytes, %v, %v; lost %d", round, len(got), ok, err, c.Stats().Lost)
		}
	}
	if l := c.Stats().Lost; l != 0 {
		t.Fatalf("lost %d", l)
	}
}
