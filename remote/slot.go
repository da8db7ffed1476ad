package remote

// KeySlot is the Redis Cluster hash slot of key: CRC16 of the key, or of
// the part between the first '{' and the next '}' when that part is not
// empty (a hash tag), modulo 16384. The CRC is CRC-16/XMODEM (polynomial
// 0x1021, initial value 0, no reflection), as the Redis Cluster
// specification ("Keys distribution model", "Hash tags") defines it.
func KeySlot(key []byte) uint16 {
	if s := indexByte(key, '{'); s >= 0 {
		if e := indexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	return crc16(key) & (Slots - 1)
}

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// crc16Table is the table of CRC-16/XMODEM for one byte.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crc16Table[byte(c>>8)^x]
	}
	return c
}
