package hll

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
)

// Recorded from redis-server 7.0.15: PFADD g1 x0..x49 (sparse), PFADD g2
// y0..y4999 (dense), then GET; their PFCOUNTs and PFCOUNT g1 g2.
const (
	redisG1Hex = "48594c4c010000000000000000000080388043389442a384404780148042148040fb904088801e8042ca88414384410980409d8440ebb4404390404c8840dd8004840784429180414080413a8040508842988041fe84405984258441088c40c88441199044908040cb88405d80412484440d98417f8c446d80409f8842088024842d88407b9444558c4108842a8443be844126a433844074804050884061"
	redisG2SHA = "017ffa5cdad3a72164bb33d4f4d4ad71d314c2b0c4ab1e590f8d29ed113506c8"
)

func elems(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(prefix + strconv.Itoa(i))
	}
	return out
}

// TestRedisBytes (VP1): the strings and counts recorded from redis-server
// are rebuilt byte for byte, one element at a time as in one PFADD.
func TestRedisBytes(t *testing.T) {
	g1, changed, err := Add(nil, elems("x", 50), DefaultSparseMaxBytes)
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	if got := hex.EncodeToString(g1); got != redisG1Hex {
		t.Fatalf("g1:\n got  %s\n want %s", got, redisG1Hex)
	}
	g2, _, err := Add(nil, elems("y", 5000), DefaultSparseMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(g2); hex.EncodeToString(sum[:]) != redisG2SHA || !IsDense(g2) {
		t.Fatalf("g2 (%d bytes, dense %v) is not redis-server's", len(g2), IsDense(g2))
	}
	for _, c := range []struct {
		v    []byte
		want uint64
	}{{g1, 50}, {g2, 4954}} {
		n, fresh, err := Count(c.v)
		if err != nil || n != c.want {
			t.Fatalf("Count: %d %v, want %d", n, err, c.want)
		}
		if cached, ok := Cached(fresh); !ok || cached != c.want {
			t.Fatalf("the fresh string caches %d %v", cached, ok)
		}
	}
	var r Registers
	if r.Merge(g1) != nil || r.Merge(g2) != nil || r.Count() != 5005 {
		t.Fatalf("union: %d, want 5005", r.Count())
	}
}

// TestCorruptTable (VP2): strings that are no HyperLogLog and corrupt
// sparse ones get their error from every function.
func TestCorruptTable(t *testing.T) {
	hdr := func(enc byte) string { return "HYLL" + string([]byte{enc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}) }
	for _, c := range []struct {
		name string
		v    string
		want error
	}{
		{"empty", "", ErrNotHLL},
		{"short", "HYLL\x01", ErrNotHLL},
		{"magic", "HYLX" + hdr(1)[4:] + "\x7f\xff", ErrNotHLL},
		{"encoding", hdr(2) + "\x7f\xff", ErrNotHLL},
		{"dense length", hdr(0) + "\x7f\xff", ErrNotHLL},
		{"no opcodes", hdr(1), ErrCorrupt},
		{"too few", hdr(1) + "\x7f\xfe", ErrCorrupt},
		{"too many", hdr(1) + "\x7f\xff\x00", ErrCorrupt},
		{"VAL past the end", hdr(1) + "\x7f\xfe\x85", ErrCorrupt},
		{"cut XZERO", hdr(1) + "\x7f", ErrCorrupt},
	} {
		v := []byte(c.v)
		if _, _, err := Count(v); !errors.Is(err, c.want) {
			t.Errorf("%s: Count %v, want %v", c.name, err, c.want)
		}
		var r Registers
		if err := r.Merge(v); !errors.Is(err, c.want) {
			t.Errorf("%s: Merge %v, want %v", c.name, err, c.want)
		}
		if c.want == ErrNotHLL {
			if _, _, err := Add(v, elems("a", 3), DefaultSparseMaxBytes); !errors.Is(err, ErrNotHLL) {
				t.Errorf("%s: Add %v", c.name, err)
			}
		}
	}
}

// FuzzDecode (VP2): any bytes after a sparse or dense header, through
// every function, with a small and the default sparse limit: no panic,
// only the package's errors, and a valid result stays a HyperLogLog.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("\x7f\xff"), byte(1), uint16(3000))
	f.Add([]byte("\x7f\xfe\x84"), byte(1), uint16(20))
	f.Add([]byte("\x40\x00\x7f\xfe"), byte(1), uint16(3000))
	f.Add([]byte("\x84\x84\x84\x7f\xfc"), byte(1), uint16(25))
	f.Add([]byte("\x7f"), byte(1), uint16(3000))
	f.Add(bytes.Repeat([]byte{0xff}, 12288), byte(0), uint16(3000))
	f.Fuzz(func(t *testing.T, body []byte, enc byte, limit uint16) {
		v := append([]byte("HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"), body...)
		v[4] = enc % 3
		orig := bytes.Clone(v)
		ok := func(err error) bool { return err == nil || errors.Is(err, ErrNotHLL) || errors.Is(err, ErrCorrupt) }
		limit %= 4000 // past it a sparse PFMERGE is slow, as in Redis
		out, _, err := Add(v, elems("e", 20), int(limit))
		if !ok(err) || err == nil && Check(out) != nil {
			t.Fatalf("Add: %v", err)
		}
		if _, fresh, err := Count(v); !ok(err) || fresh != nil && Check(fresh) != nil {
			t.Fatalf("Count: %v", err)
		}
		var r Registers
		if err := r.Merge(v); !ok(err) {
			t.Fatalf("Merge: %v", err)
		}
		r.Count()
		if out, err := r.Store(v, int(limit)); !ok(err) || err == nil && Check(out) != nil {
			t.Fatalf("Store: %v", err)
		}
		if !bytes.Equal(v, orig) {
			t.Fatal("the input changed")
		}
	})
}

// TestSparseDenseAgree (VP3): elements added to a sparse string and to
// a dense one count the same at every size, and toDense of the sparse
// one is the dense one.
func TestSparseDenseAgree(t *testing.T) {
	sparse := New()
	dense, err := toDense(New())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		e := [][]byte{[]byte("k" + strconv.Itoa(i))}
		sparse, _, _ = Add(sparse, e, 1<<30)
		dense, _, _ = Add(dense, e, 1<<30)
		if i%97 != 0 {
			continue
		}
		if IsDense(sparse) {
			break // a register passed 32
		}
		a, _, err1 := Count(sparse)
		b, _, err2 := Count(dense)
		if err1 != nil || err2 != nil || a != b {
			t.Fatalf("after %d: sparse %d %v, dense %d %v", i+1, a, err1, b, err2)
		}
		d, err := toDense(sparse)
		if err != nil || !bytes.Equal(d[HeaderSize:], dense[HeaderSize:]) {
			t.Fatalf("after %d: toDense differs (%v)", i+1, err)
		}
	}
}

// TestPromotion (VP3): with a limit the sparse string never passes it,
// and turns dense at the first element that would make it.
func TestPromotion(t *testing.T) {
	for _, limit := range []int{0, 20, 100, 3000} {
		v := New()
		for i := range 5000 {
			prev := v
			v, _, _ = Add(v, [][]byte{[]byte(strconv.Itoa(i))}, limit)
			if IsDense(v) {
				if !IsDense(prev) && len(prev) > limit && limit >= 18 {
					t.Fatalf("limit %d: sparse string of %d bytes", limit, len(prev))
				}
				break
			}
			if len(v) > limit && len(v) > len(prev) {
				t.Fatalf("limit %d: grew to %d bytes sparse", limit, len(v))
			}
		}
		if !IsDense(v) {
			t.Fatalf("limit %d: never dense", limit)
		}
	}
}

// TestInputUntouched (VP4): Add, Count and Store leave their input as
// it was.
func TestInputUntouched(t *testing.T) {
	v, _, _ := Add(nil, elems("a", 40), DefaultSparseMaxBytes)
	orig := bytes.Clone(v)
	Add(v, elems("b", 400), 100)
	Count(v)
	var r Registers
	r.Merge(v)
	r.Store(v, DefaultSparseMaxBytes)
	if !bytes.Equal(v, orig) {
		t.Fatal("an operation changed its input")
	}
}

// TestSelfTest (VP3): PFSELFTEST's check holds, and PFDEBUG DECODE
// writes Redis's text for the opcodes redis-server 7.0 decoded.
func TestSelfTest(t *testing.T) {
	if !SelfTest(uint64(len(t.Name()))) {
		t.Fatal("SelfTest failed")
	}
	v, _, _ := Add(nil, [][]byte{[]byte("a"), []byte("b")}, DefaultSparseMaxBytes)
	if got, want := Decode(v), "Z:12711 v:2,1 Z:3068 v:1,1 Z:603"; got != want {
		t.Fatalf("Decode: %q, want %q", got, want)
	}
}
