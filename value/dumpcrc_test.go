package value

import "testing"

// TestDumpCRC checks DumpCRC against crc64.c's own test vector (its
// crc64Test: "123456789" gives 0xe9c6d914c4b8d9ca) and against a payload
// redis-server 7.0 answered DUMP with (SET s hello).
func TestDumpCRC(t *testing.T) {
	if got := DumpCRC([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x", got)
	}
	p := []byte("\x00\x05hello\n\x00cr\xdfve4 \n")
	if err := VerifyDump(p); err != nil {
		t.Fatalf("redis-server's payload: %v", err)
	}
}
