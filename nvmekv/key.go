package nvmekv

import "encoding/binary"

// The key packer: the one place that knows where a device key goes in a
// command. It follows xNVMe kvs_cmd_set_key() / SPDK nvme_kv_cmd_set_key()
// and KV Command Set 1.0 §3.1 ("Command Dword 2 contains bits 31:00" of
// the key, and so on, in every command's figures): bytes copied as-is, key
// bytes 0..7 into CDW2..CDW3 (SQE bytes 8..15) and bytes 8..15 into
// CDW14..CDW15 (SQE bytes 56..63), unused bytes zero. The AirMettle CSD
// dialect reverses this; swap these two functions to speak it.

// PackKey stores key (at most 16 bytes) into c's key dwords.
func PackKey(c *Command, key []byte) {
	var k [16]byte
	copy(k[:], key)
	le := binary.LittleEndian
	c.CDW2 = le.Uint32(k[0:])
	c.CDW3 = le.Uint32(k[4:])
	c.CDW14 = le.Uint32(k[8:])
	c.CDW15 = le.Uint32(k[12:])
}

// UnpackKey returns the key of c (KeyLen bytes of the key dwords), as the
// emulated controller reads it. ok is false if KL exceeds 16.
func UnpackKey(c *Command) (key [16]byte, n int, ok bool) {
	n = c.KeyLen()
	if n > MaxKeyLen {
		return key, n, false
	}
	le := binary.LittleEndian
	le.PutUint32(key[0:], c.CDW2)
	le.PutUint32(key[4:], c.CDW3)
	le.PutUint32(key[8:], c.CDW14)
	le.PutUint32(key[12:], c.CDW15)
	clear(key[n:])
	return key, n, true
}
