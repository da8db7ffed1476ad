package value

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

// dumpLimits are generous limits for the tests.
var dumpLimits = DumpLimits{MaxItems: 1 << 20, MaxBytes: 64 << 20}

// TestDecodeRedisPayloads (V5) reads payloads redis-server 7.0 answered
// DUMP with (SET, a long string it LZF-compressed, an int-encoded string,
// a list as a quicklist of a listpack, an intset, a set, a sorted set and
// a hash as listpacks).
func TestDecodeRedisPayloads(t *testing.T) {
	for _, c := range []struct {
		p    string
		want Dumped
	}{
		{"\x00\x05hello\n\x00cr\xdfve4 \n", Dumped{Type: DumpString, Str: []byte("hello")}},
		{"\x00\xc190\n\x00\x9d\x94\xea'\x93\xfc\b\xb9", Dumped{Type: DumpString, Str: []byte("12345")}},
		{"\x00\xc3\t@d\x01aa\xe0W\x00\x01aa\n\x00\xe8\xa3\xb5\a\xb0m\xf2q", Dumped{Type: DumpString, Str: []byte(fmt.Sprintf("%0100d", 0)[:0] + string(repeat('a', 100)))}},
		{"\x12\x01\x02\x11\x11\x00\x00\x00\x04\x00\x81a\x02\x81b\x02\x01\x01\x02\x01\xff\n\x00mrq>\x9bCH+", Dumped{Type: DumpList, Items: items("a", "b", "1", "2")}},
		{"\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00\x03\x00\n\x00\xa5\x02\\\xe2mnM\x1b", Dumped{Type: DumpSet, Items: items("1", "2", "3")}},
		{"\x02\x02\x01a\x01b\n\x00\xfed!%\xeb\x03=\r", Dumped{Type: DumpSet, Items: items("a", "b")}},
		{"\x11\x14\x14\x00\x00\x00\x04\x00\x81a\x02\x831.5\x04\x81b\x02\x02\x01\xff\n\x00\xfa\x02\xb4%\xaf\x18\x87c", Dumped{Type: DumpZSet, Items: items("a", "b"), Scores: []float64{1.5, 2}}},
		{"\x10\r\r\x00\x00\x00\x02\x00\x81f\x02\x81v\x02\xff\n\x00 \xf1=D#T\b\x9d", Dumped{Type: DumpHash, Items: items("f", "v")}},
	} {
		d, err := DecodeDump([]byte(c.p), dumpLimits)
		if err != nil {
			t.Fatalf("%q: %v", c.p, err)
		}
		if !reflect.DeepEqual(d, c.want) {
			t.Fatalf("%q: %+v, want %+v", c.p, d, c.want)
		}
	}
}

func repeat(b byte, n int) []byte {
	s := make([]byte, n)
	for i := range s {
		s[i] = b
	}
	return s
}

func items(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

// randomDumped is a random value of every type.
func randomDumped(r *rand.Rand) Dumped {
	el := func() []byte {
		b := make([]byte, r.IntN(3)*r.IntN(100))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	d := Dumped{Type: DumpType(1 + r.IntN(5))}
	n := 1 + r.IntN(20)
	seen := map[string]bool{}
	for len(d.Items) < n*(1+boolInt(d.Type == DumpHash)) {
		e := el()
		if d.Type != DumpList && d.Type != DumpString && seen[string(e)] {
			continue
		}
		seen[string(e)] = true
		d.Items = append(d.Items, e)
		if d.Type == DumpHash {
			d.Items = append(d.Items, el())
		}
		if d.Type == DumpZSet {
			d.Scores = append(d.Scores, []float64{math.Inf(-1), -1.5, 0, 3, math.Inf(1), r.NormFloat64()}[r.IntN(6)])
		}
	}
	if d.Type == DumpString {
		d.Str, d.Items = el(), nil
	}
	return d
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDumpRoundTrip (V5): what EncodeDump writes, of DumpSize bytes,
// DecodeDump reads back as it was.
func TestDumpRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		d := randomDumped(r)
		p := EncodeDump(nil, d)
		if len(p) != DumpSize(d) {
			t.Fatalf("size %d, DumpSize %d", len(p), DumpSize(d))
		}
		got, err := DecodeDump(p, dumpLimits)
		if err != nil {
			t.Fatalf("%+v: %v", d, err)
		}
		norm := func(x *Dumped) {
			if x.Str == nil && x.Type == DumpString {
				x.Str = []byte{}
			}
			for i := range x.Items {
				if x.Items[i] == nil {
					x.Items[i] = []byte{}
				}
			}
		}
		norm(&d)
		norm(&got)
		if !reflect.DeepEqual(got, d) {
			t.Fatalf("got %+v, want %+v", got, d)
		}
	}
}

// TestDumpRefusals (V5): a changed byte, a short payload or a later
// version fails the footer; bad data, an empty aggregate, a duplicate
// member and values past the limits are refused.
func TestDumpRefusals(t *testing.T) {
	good := EncodeDump(nil, Dumped{Type: DumpSet, Items: items("a", "b")})
	for i := range good {
		p := append([]byte(nil), good...)
		p[i] ^= 0x10
		if _, err := DecodeDump(p, dumpLimits); !errors.Is(err, ErrDumpVersion) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	if _, err := DecodeDump(good[:9], dumpLimits); !errors.Is(err, ErrDumpVersion) {
		t.Fatalf("short: %v", err)
	}
	seal := func(body string, ver uint16) []byte {
		p := append([]byte(body), byte(ver), byte(ver>>8))
		c := DumpCRC(p)
		for i := range 8 {
			p = append(p, byte(c>>(8*i)))
		}
		return p
	}
	if _, err := DecodeDump(seal("\x00\x01a", 11), dumpLimits); !errors.Is(err, ErrDumpVersion) {
		t.Fatalf("version 11: %v", err)
	}
	for _, body := range []string{"\x02\x00", "\x02\x02\x01a\x01a", "\x04\x02\x01a\x01b\x01a\x01c", "\x05\x01\x01a\x00\x00\x00\x00\x00\x00\xf8\x7f",
		"\x0f", "\x06", "\x0e\x00", "\x14", "\x00\xc4", "\x12\x01\x03\x01a", "\x01\x00", "\x00\x3f"} {
		if _, err := DecodeDump(seal(body, 10), dumpLimits); !errors.Is(err, ErrDumpFormat) {
			t.Fatalf("%q: %v", body, err)
		}
	}
	big := EncodeDump(nil, Dumped{Type: DumpList, Items: items("a", "b", "c")})
	var le *DumpLimitError
	if _, err := DecodeDump(big, DumpLimits{MaxItems: 2, MaxBytes: 100}); !errors.As(err, &le) || !le.Items {
		t.Fatalf("items: %v", err)
	}
	if _, err := DecodeDump(big, DumpLimits{MaxItems: 10, MaxBytes: 2}); !errors.As(err, &le) || le.Items {
		t.Fatalf("bytes: %v", err)
	}
	// An LZF string declaring 1 GiB is refused before it is allocated.
	if _, err := DecodeDump(seal("\x00\xc3\x01\x81\x00\x00\x00\x00\x40\x00\x00\x00\x00a", 10), DumpLimits{MaxItems: 10, MaxBytes: 1 << 20}); !errors.As(err, &le) {
		t.Fatalf("lzf: %v", err)
	}
	// One compressed byte declaring 1 MiB, within the limits, is refused
	// before the MiB is taken: LZF yields at most 88 bytes a byte.
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err := DecodeDump(seal("\x00\xc3\x01\x80\x00\x10\x00\x00a", 10), DumpLimits{MaxItems: 10, MaxBytes: 1 << 21})
	runtime.ReadMemStats(&m1)
	if !errors.Is(err, ErrDumpFormat) || m1.TotalAlloc-m0.TotalAlloc > 64<<10 {
		t.Fatalf("lzf of 1 byte declaring 1 MiB: %v, %d bytes allocated", err, m1.TotalAlloc-m0.TotalAlloc)
	}
}

// TestDecodeZiplists (V5): the ziplist encodings of Redis 6.2's payloads
// (a list as a ziplist, a quicklist of ziplists, a hash and a sorted set
// as ziplists) read as their elements, integers of every width included.
func TestDecodeZiplists(t *testing.T) {
	seal := func(body string) []byte {
		p := append([]byte(body), 9, 0)
		c := DumpCRC(p)
		for i := range 8 {
			p = append(p, byte(c>>(8*i)))
		}
		return p
	}
	// entries: "a"; 5 (immediate); -2 (int8); 300 (int16); 70000 (int24); 1<<40 (int64)
	ents := "\x00\x01a" + "\x03\xf6" + "\x02\xfe\xfe" + "\x03\xc0\x2c\x01" + "\x04\xf0\x70\x11\x01" + "\x05\xe0\x00\x00\x00\x00\x00\x01\x00\x00"
	zl := func(e string, n byte) string {
		size := 10 + len(e) + 1
		return string([]byte{byte(size), 0, 0, 0, 10, 0, 0, 0, n, 0}) + e + "\xff"
	}
	l := zl(ents, 6)
	want := items("a", "5", "-2", "300", "70000", "1099511627776")
	for _, body := range []string{"\x0a" + string(rune(len(l))) + l, "\x0e\x02" + string(rune(len(l))) + l + "\x0b" + zl("", 0)} {
		d, err := DecodeDump(seal(body), dumpLimits)
		if err != nil || d.Type != DumpList || !reflect.DeepEqual(d.Items, want) {
			t.Fatalf("%q: %+v %v", body, d, err)
		}
	}
	d, err := DecodeDump(seal("\x0d"+string(rune(len(l)))+l), dumpLimits)
	if err != nil || d.Type != DumpHash || len(d.Items) != 6 {
		t.Fatalf("hash: %+v %v", d, err)
	}
	d, err = DecodeDump(seal("\x0c"+string(rune(len(l)))+l), dumpLimits)
	if err != nil || d.Type != DumpZSet || !reflect.DeepEqual(d.Scores, []float64{5, 300, 1 << 40}) {
		t.Fatalf("zset: %+v %v", d, err)
	}
	if _, err := DecodeDump(seal("\x0a"+string(rune(len(l)-1))+l[:len(l)-1]), dumpLimits); !errors.Is(err, ErrDumpFormat) {
		t.Fatalf("a ziplist cut short: %v", err)
	}
}
