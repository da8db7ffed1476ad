package value

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// A DUMP payload (Redis 7.0, cluster.c createDumpPayload and
// verifyDumpPayload) is one value in the RDB encoding: its RDB type byte
// and the value as rdb.c's rdbSaveObject writes it, then the RDB version
// as 2 bytes little endian, then the crc64 (DumpCRC) of every byte before
// it, 8 bytes little endian. DecodeDump reads what redis-server 7.0's DUMP
// writes; EncodeDump writes the simplest encodings 7.0's RESTORE reads
// (each value a count and plain strings), not byte for byte what DUMP
// writes.

// DumpType is the type of the value a payload holds.
type DumpType uint8

// The types of value a payload holds.
const (
	DumpString DumpType = iota + 1
	DumpList
	DumpSet
	DumpZSet
	DumpHash
)

// Dumped is the value of a payload. Its byte slices alias the payload
// they were read from, except strings a payload holds as integers or
// compressed.
type Dumped struct {
	Type DumpType
	Str  []byte // DumpString's bytes
	// Items are a list's elements head first, a set's or a sorted set's
	// members, a hash's fields and values (field, value, field, value...
	// in the payload's order).
	Items  [][]byte
	Scores []float64 // DumpZSet: the score of each of Items
}

// The RDB type numbers (rdb.h, Redis 7.0), of the types DecodeDump reads
// (and the ziplist ones, dumpziplist.go). The others (6, 7: modules; 9:
// zipmap; 15, 19: streams; 20 on: Redis 7.2's and later) are refused as
// bad data.
const (
	rdbString         = 0
	rdbList           = 1
	rdbSet            = 2
	rdbZSet           = 3 // scores as strings (rdbLoadDoubleValue)
	rdbHash           = 4
	rdbZSet2          = 5 // scores as binary doubles
	rdbSetIntset      = 11
	rdbHashListpack   = 16
	rdbZSetListpack   = 17
	rdbListQuicklist2 = 18
)

// DumpRDBVersion is the RDB version a payload ends with: rdb.h's
// RDB_VERSION in Redis 7.0. A payload of a later version is refused, as
// 7.0's verifyDumpPayload refuses it.
const DumpRDBVersion = 10

// The errors of DecodeDump. ErrDumpVersion: the payload is too short, of a
// later RDB version or fails its checksum; ErrDumpFormat: it does not hold
// a value DecodeDump reads. A value past the limits is a *DumpLimitError.
var (
	ErrDumpVersion = errors.New("value: DUMP payload version or checksum are wrong")
	ErrDumpFormat  = errors.New("value: DUMP payload is not a value in a known RDB encoding")
)

// DumpLimits bound what DecodeDump builds: MaxItems the elements (a
// hash's fields and values each count) and MaxBytes the bytes of the
// strings of a value, checked from the counts and lengths the payload
// declares before anything of that size is allocated (V5).
type DumpLimits struct {
	MaxItems, MaxBytes int
}

// DumpLimitError is a payload whose value is past DumpLimits: N items
// (when Items) or N bytes, over Limit.
type DumpLimitError struct {
	Items    bool
	N, Limit int
}

func (e *DumpLimitError) Error() string {
	if e.Items {
		return "value: DUMP payload has " + strconv.Itoa(e.N) + " elements, the limit is " + strconv.Itoa(e.Limit)
	}
	return "value: DUMP payload's value takes over " + strconv.Itoa(e.N) + " bytes, the limit is " + strconv.Itoa(e.Limit)
}

// VerifyDump checks p's footer as verifyDumpPayload does: at least the 10
// bytes of the footer, a version no later than DumpRDBVersion, and the
// checksum.
func VerifyDump(p []byte) error {
	if len(p) < 10 {
		return ErrDumpVersion
	}
	foot := p[len(p)-10:]
	if binary.LittleEndian.Uint16(foot) > DumpRDBVersion {
		return ErrDumpVersion
	}
	if binary.LittleEndian.Uint64(foot[2:]) != DumpCRC(p[:len(p)-8]) {
		return ErrDumpVersion
	}
	return nil
}

// DecodeDump verifies p (VerifyDump) and reads its value (V5: any input
// gives a value or an error, never a panic nor an allocation past lim).
// As rdbLoadObject reads it from the whole payload, the value may run into
// the footer's bytes, and bytes after it are not looked at. An aggregate
// with no element, or a set, sorted set or hash with a member twice, or a
// sorted set with a NaN score, is bad data, as Redis refuses it.
func DecodeDump(p []byte, lim DumpLimits) (Dumped, error) {
	if err := VerifyDump(p); err != nil {
		return Dumped{}, err
	}
	r := &rdbReader{b: p, off: 1, lim: lim}
	l, ok := rdbLoaders[p[0]]
	if !ok {
		return Dumped{}, ErrDumpFormat
	}
	d := Dumped{Type: l.t}
	err := l.load(r, &d)
	if err == nil && len(d.Items) == 0 && d.Type != DumpString {
		err = ErrDumpFormat // rdbLoadObject's emptykey
	}
	if err == nil {
		err = d.unique()
	}
	if err != nil {
		return Dumped{}, err
	}
	return d, nil
}

// rdbLoaders read the value of each RDB type DecodeDump reads.
var rdbLoaders = map[byte]struct {
	t    DumpType
	load func(r *rdbReader, d *Dumped) error
}{
	rdbString:         {DumpString, func(r *rdbReader, d *Dumped) (err error) { d.Str, err = r.str(); return err }},
	rdbList:           {DumpList, func(r *rdbReader, d *Dumped) error { return r.plain(d, 1) }},
	rdbSet:            {DumpSet, func(r *rdbReader, d *Dumped) error { return r.plain(d, 1) }},
	rdbHash:           {DumpHash, func(r *rdbReader, d *Dumped) error { return r.plain(d, 2) }},
	rdbZSet:           {DumpZSet, func(r *rdbReader, d *Dumped) error { return r.zset(d, false) }},
	rdbZSet2:          {DumpZSet, func(r *rdbReader, d *Dumped) error { return r.zset(d, true) }},
	rdbSetIntset:      {DumpSet, (*rdbReader).intset},
	rdbListQuicklist2: {DumpList, (*rdbReader).quicklist},
	rdbHashListpack:   {DumpHash, packedOf(2, listpackOf)},
	rdbZSetListpack:   {DumpZSet, scoredOf(listpackOf)},
	rdbListZiplist:    {DumpList, packedOf(1, ziplistOf)},
	rdbListQuicklist:  {DumpList, (*rdbReader).quicklistV1},
	rdbHashZiplist:    {DumpHash, packedOf(2, ziplistOf)},
	rdbZSetZiplist:    {DumpZSet, scoredOf(ziplistOf)},
}

// A packing reads the elements of a listpack or a ziplist.
type packing func(r *rdbReader, items [][]byte, b []byte) ([][]byte, error)

var (
	listpackOf packing = (*rdbReader).listpack
	ziplistOf  packing = (*rdbReader).ziplist
)

// packedOf reads an RDB string that is a listpack or ziplist of elements,
// a multiple of per (a hash's or a sorted set's pairs).
func packedOf(per int, read packing) func(r *rdbReader, d *Dumped) error {
	return func(r *rdbReader, d *Dumped) error {
		s, err := r.str()
		if err != nil {
			return err
		}
		if d.Items, err = read(r, d.Items, s); err != nil {
			return err
		}
		if len(d.Items)%per != 0 {
			return ErrDumpFormat
		}
		return nil
	}
}

// scoredOf reads a sorted set's listpack or ziplist of member, score
// pairs.
func scoredOf(read packing) func(r *rdbReader, d *Dumped) error {
	pairs := packedOf(2, read)
	return func(r *rdbReader, d *Dumped) error {
		if err := pairs(r, d); err != nil {
			return err
		}
		return d.packedScores()
	}
}

// packedScores turns a listpack's member, score pairs into members and
// scores (zzlGetScore: a score is a number written as a string or an
// integer entry).
func (d *Dumped) packedScores() error {
	n := len(d.Items) / 2
	d.Scores = make([]float64, n)
	for i := range n {
		f, err := strconv.ParseFloat(string(d.Items[2*i+1]), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) {
			return ErrDumpFormat
		}
		d.Items[i], d.Scores[i] = d.Items[2*i], f
	}
	clear(d.Items[n:])
	d.Items = d.Items[:n]
	return nil
}

// unique refuses a set, sorted set or hash with a member or field twice
// (rdbLoadObject: "Duplicate set members detected" and its kin).
func (d *Dumped) unique() error {
	step := 1
	switch d.Type {
	case DumpString, DumpList:
		return nil
	case DumpHash:
		step = 2
	}
	seen := make(map[string]struct{}, len(d.Items)/step)
	for i := 0; i < len(d.Items); i += step {
		if _, dup := seen[string(d.Items[i])]; dup {
			return ErrDumpFormat
		}
		seen[string(d.Items[i])] = struct{}{}
	}
	return nil
}

// EncodeDump appends to dst the payload of d: a string as a plain string
// (RDB_TYPE_STRING), a list as RDB_TYPE_LIST, a set as RDB_TYPE_SET, a
// sorted set as RDB_TYPE_ZSET_2 (binary doubles), a hash as RDB_TYPE_HASH
// (rdb.c's rdbLoadObject reads each in 7.0), then the footer.
func EncodeDump(dst []byte, d Dumped) []byte {
	start := len(dst)
	switch d.Type {
	case DumpString:
		dst = appendRDBString(append(dst, rdbString), d.Str)
	case DumpList, DumpSet, DumpHash:
		t := byte(rdbList)
		n := len(d.Items)
		switch d.Type {
		case DumpSet:
			t = rdbSet
		case DumpHash:
			t, n = rdbHash, n/2
		}
		dst = appendRDBLen(append(dst, t), uint64(n))
		for _, it := range d.Items {
			dst = appendRDBString(dst, it)
		}
	case DumpZSet:
		dst = appendRDBLen(append(dst, rdbZSet2), uint64(len(d.Items)))
		for i, m := range d.Items {
			dst = appendRDBString(dst, m)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(d.Scores[i]))
		}
	}
	dst = binary.LittleEndian.AppendUint16(dst, DumpRDBVersion)
	return binary.LittleEndian.AppendUint64(dst, DumpCRC(dst[start:]))
}

// DumpSize is the length of EncodeDump's payload of d.
func DumpSize(d Dumped) int {
	n := 1 + 10
	switch d.Type {
	case DumpString:
		return n + rdbLenSize(uint64(len(d.Str))) + len(d.Str)
	case DumpHash:
		n += rdbLenSize(uint64(len(d.Items) / 2))
	default:
		n += rdbLenSize(uint64(len(d.Items)))
	}
	for _, it := range d.Items {
		n += rdbLenSize(uint64(len(it))) + len(it)
	}
	return n + 8*len(d.Scores)
}

// appendRDBLen appends n as rdbSaveLen writes a length (rdb.h: 6 bits in
// one byte, 14 bits in two, else 0x80 and 32 bits or 0x81 and 64 bits,
// big endian).
func appendRDBLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, 0x40|byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0x81), n)
}

// rdbLenSize is the length of appendRDBLen's n.
func rdbLenSize(n uint64) int {
	switch {
	case n < 1<<6:
		return 1
	case n < 1<<14:
		return 2
	case n <= math.MaxUint32:
		return 5
	}
	return 9
}

// appendRDBString appends s as a plain RDB string: its length and bytes.
func appendRDBString(dst, s []byte) []byte {
	return append(appendRDBLen(dst, uint64(len(s))), s...)
}
