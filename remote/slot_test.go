package remote

import "testing"

// TestKeySlot checks KeySlot against the Redis Cluster specification's
// examples and against what a real cluster answers to CLUSTER KEYSLOT
// (TestKeySlotMatchesRedis in cluster_test.go).
func TestKeySlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		slot uint16
	}{
		{"123456789", 0x31C3 & 16383}, // the CRC-16/XMODEM check value, Redis Cluster spec
		{"foo", 12182},
		{"{user1000}.following", KeySlot([]byte("user1000"))},
		{"foo{}{bar}", KeySlot([]byte("foo{}{bar}"))}, // empty first tag: the whole key
		{"foo{{bar}}zap", KeySlot([]byte("{bar"))},
		{"", 0},
	} {
		if got := KeySlot([]byte(tc.key)); got != tc.slot {
			t.Errorf("KeySlot(%q) = %d, want %d", tc.key, got, tc.slot)
		}
	}
	if crc16([]byte("123456789")) != 0x31C3 {
		t.Fatalf("crc16 check value %#x, want 0x31c3", crc16([]byte("123456789")))
	}
}
