package volume

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
)

// On-disk layout (all little-endian):
//
//	[0, 128 KiB)          table copy 0
//	[128 KiB, 256 KiB)    table copy 1
//	[1 MiB, capacity)     the namespaces' extents, each a whole number of
//	                      MiB at a MiB boundary, and the free runs between
//
// A table copy (its first 64 bytes a header, then the entries packed):
//
//	0 u64 magic "TCVOLUM1"   8 u32 version (1)    12 u32 entries
//	16 u64 generation (copy generation%2 holds it)
//	24 u64 capacity (the volume's bytes, the end of the last extent at most)
//	32 u64 volume id (random at creation)   40 u32 entry bytes
//	44 u32 CRC32C of bytes 0..44 and of the entry bytes
//	64 entries: u8 name length, the name, [16]byte id, u64 offset, u64 bytes
//
// A change writes the copy the next generation names and syncs it: a
// torn write leaves the other copy, one generation older, valid, and Open
// takes the valid copy of the highest generation (V1).
const (
	tableMagic   = 0x314d554c4f564354 // bytes "TCVOLUM1"
	tableVersion = 1
	tableBytes   = 128 << 10
	headerBytes  = 64
	// DataStart is where the first extent may begin.
	DataStart = 1 << 20
	// Align is the extents' alignment and the unit of their sizes.
	Align = 1 << 20
	// MaxNamespaces is how many namespaces a table holds.
	MaxNamespaces = 256
	maxName       = 255
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Extent is a namespace of the volume: its name, its identity (random at
// creation, as a controller gives an NGUID) and its bytes on the device.
type Extent struct {
	Name   string
	ID     [16]byte
	Offset int64
	Bytes  int64
}

// table is what a copy holds.
type table struct {
	gen      uint64
	capacity int64
	id       uint64
	ns       []Extent // by offset
}

func (t *table) encode(b []byte) error {
	clear(b)
	p := headerBytes
	for _, e := range t.ns {
		if len(e.Name) > maxName {
			return fmt.Errorf("%w: %q is longer than %d bytes", ErrBadName, e.Name, maxName)
		}
		if p+1+len(e.Name)+32 > len(b) {
			return fmt.Errorf("%w: the table holds %d bytes of entries at most", ErrCapacity, len(b)-headerBytes)
		}
		b[p] = byte(len(e.Name))
		p += 1 + copy(b[p+1:], e.Name)
		p += copy(b[p:], e.ID[:])
		binary.LittleEndian.PutUint64(b[p:], uint64(e.Offset))
		binary.LittleEndian.PutUint64(b[p+8:], uint64(e.Bytes))
		p += 16
	}
	le := binary.LittleEndian
	le.PutUint64(b[0:], tableMagic)
	le.PutUint32(b[8:], tableVersion)
	le.PutUint32(b[12:], uint32(len(t.ns)))
	le.PutUint64(b[16:], t.gen)
	le.PutUint64(b[24:], uint64(t.capacity))
	le.PutUint64(b[32:], t.id)
	le.PutUint32(b[40:], uint32(p-headerBytes))
	le.PutUint32(b[44:], tableCRC(b, p))
	return nil
}

func tableCRC(b []byte, end int) uint32 {
	c := crc32.Update(0, castagnoli, b[:44])
	return crc32.Update(c, castagnoli, b[headerBytes:end])
}

// isTable reports whether b starts with a table copy's magic.
func isTable(b []byte) bool {
	return len(b) >= 8 && binary.LittleEndian.Uint64(b) == tableMagic
}

// decode parses a copy; an error says why it is not a valid one.
func decode(b []byte) (table, error) {
	le := binary.LittleEndian
	var t table
	switch {
	case !isTable(b):
		return t, fmt.Errorf("%w: no table magic", ErrFormat)
	case le.Uint32(b[8:]) != tableVersion:
		return t, fmt.Errorf("%w: table version %d, this build reads %d", ErrFormat, le.Uint32(b[8:]), tableVersion)
	}
	n, eb := int(le.Uint32(b[12:])), int(le.Uint32(b[40:]))
	if n > MaxNamespaces || eb > len(b)-headerBytes {
		return t, fmt.Errorf("%w: table of %d entries in %d bytes", ErrFormat, n, eb)
	}
	if tableCRC(b, headerBytes+eb) != le.Uint32(b[44:]) {
		return t, fmt.Errorf("%w: table CRC mismatch", ErrFormat)
	}
	t.gen, t.capacity, t.id = le.Uint64(b[16:]), int64(le.Uint64(b[24:])), le.Uint64(b[32:])
	p, end := headerBytes, headerBytes+eb
	for range n {
		if p >= end || p+1+int(b[p])+32 > end {
			return t, fmt.Errorf("%w: table entry past its end", ErrFormat)
		}
		var e Extent
		l := int(b[p])
		e.Name = string(b[p+1 : p+1+l])
		p += 1 + l
		copy(e.ID[:], b[p:])
		e.Offset, e.Bytes = int64(le.Uint64(b[p+16:])), int64(le.Uint64(b[p+24:]))
		p += 32
		t.ns = append(t.ns, e)
	}
	return t, t.check()
}

// check refuses a table whose extents are not aligned, overlap or lie
// past the capacity, or whose names repeat.
func (t *table) check() error {
	slices.SortFunc(t.ns, byOffset)
	end := int64(DataStart)
	names := map[string]bool{}
	for _, e := range t.ns {
		switch {
		case e.Offset%Align != 0 || e.Bytes <= 0 || e.Bytes%Align != 0:
			return fmt.Errorf("%w: namespace %q at %d, %d bytes: not whole MiB", ErrFormat, e.Name, e.Offset, e.Bytes)
		case e.Offset < end:
			return fmt.Errorf("%w: namespace %q at %d overlaps what comes before it (to %d)", ErrFormat, e.Name, e.Offset, end)
		case names[e.Name]:
			return fmt.Errorf("%w: namespace %q is in the table twice", ErrFormat, e.Name)
		}
		names[e.Name] = true
		end = e.Offset + e.Bytes
	}
	if end > t.capacity {
		return fmt.Errorf("%w: extents reach %d, past the volume's capacity %d", ErrFormat, end, t.capacity)
	}
	return nil
}

// fit is the offset of the first free run of at least n bytes, with the
// extents as they are plus taken (by offset); ok is false when none is
// long enough, and largest is the longest free run then.
func (t *table) fit(n int64, taken []Extent) (off int64, ok bool, largest int64) {
	all := slices.Concat(t.ns, taken)
	slices.SortFunc(all, byOffset)
	end := int64(DataStart)
	for _, e := range append(all, Extent{Offset: t.capacity}) {
		if gap := e.Offset - end; gap >= n {
			return end, true, 0
		} else if gap > largest {
			largest = gap
		}
		end = max(end, e.Offset+e.Bytes)
	}
	return 0, false, largest
}

// roundUp is n rounded up to whole Align units.
func roundUp(n int64) int64 { return (n + Align - 1) / Align * Align }

func byOffset(a, b Extent) int { return cmp.Compare(a.Offset, b.Offset) }
