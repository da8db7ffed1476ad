package value

import "hash/crc64"

// The checksum that ends a DUMP payload is Redis's crc64 (crc64.c): the
// Jones polynomial 0xad93d23594c935a9, reflected in and out, initial value
// 0 and no final xor. Go's hash/crc64 computes the same reflected CRC from
// a table of the bit-reversed polynomial, but complements the value before
// and after: handing it ^0 and complementing its answer undoes both.
const jonesReflected = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 with its 64 bits reversed

var jonesTable = crc64.MakeTable(jonesReflected)

// DumpCRC is Redis's crc64 of p (a DUMP payload's checksum, taken over
// every byte before it).
func DumpCRC(p []byte) uint64 {
	return ^crc64.Update(^uint64(0), jonesTable, p)
}
