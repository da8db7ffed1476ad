package kvconform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
)

// Raw sends one raw I/O command with data buffer buf and returns cqe.res
// (0, -errno or the NVMe status field) and DW0.
type Raw func(ctx context.Context, c nvmekv.Command, buf []byte) (res int32, dw0 uint32, err error)

// Target is what Run checks.
type Target struct {
	NS   nvmekv.Namespace
	NSID uint32 // for Raw commands; default 1
	Raw  Raw    // optional
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, tg Target) {
	if tg.NSID == 0 {
		tg.NSID = 1
	}
	lim := tg.NS.Limits()
	if lim.MaxValueLen <= 0 || lim.MaxKeyLen != nvmekv.MaxKeyLen {
		t.Fatalf("namespace limits %+v: want 16-byte keys and a max value size", lim)
	}
	s := &suite{tg: tg, lim: lim, prefix: fmt.Sprintf("c%05d", rand.IntN(100000))}
	t.Run("StoreRetrieve", s.storeRetrieve)
	t.Run("RetrieveShortBuffer", s.shortBuffer)
	t.Run("KeyDoesNotExist", s.missing)
	t.Run("StoreOptions", s.storeOptions)
	t.Run("ValueTooBig", s.valueTooBig)
	t.Run("KeySize", s.keySize)
	t.Run("DeleteExist", s.deleteExist)
	t.Run("ListPaging", s.listPaging)
	t.Run("LinkedChain", s.linkedChain)
	t.Run("ChunkedLargeValues", s.chunked)
}

type suite struct {
	tg     Target
	lim    nvmekv.Limits
	prefix string
}

func (s *suite) key(name string) []byte {
	k := s.prefix + name
	if len(k) > nvmekv.MaxKeyLen {
		panic("kvconform: key too long: " + k)
	}
	return []byte(k)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// expect fails unless errors.Is(err, want) (want nil: err == nil).
func expect(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

// readBack checks key holds exactly want.
func (s *suite) readBack(t *testing.T, ctx context.Context, key, want []byte) {
	t.Helper()
	buf := make([]byte, len(want)+16)
	n, err := s.tg.NS.Retrieve(ctx, key, buf)
	if err != nil || n != len(want) || !bytes.Equal(buf[:n], want) {
		t.Fatalf("Retrieve(%q) = %d bytes, %v; want the %d stored bytes", key, n, err, len(want))
	}
}

func (s *suite) storeRetrieve(t *testing.T) {
	ctx := ctxT(t)
	for i, n := range []int{1, 100, 4096, 4097, 8192, 8193, 65536, s.lim.MaxValueLen} {
		if n > s.lim.MaxValueLen {
			continue
		}
		k := s.key(fmt.Sprintf("sr%d", i))
		v := pattern(n, uint64(i))
		expect(t, fmt.Sprintf("Store %d bytes", n), s.tg.NS.Store(ctx, k, v, 0), nil)
		s.readBack(t, ctx, k, v)
		// Overwrite with a different size.
		v2 := pattern(max(1, n/2), uint64(i)+100)
		expect(t, "overwrite", s.tg.NS.Store(ctx, k, v2, 0), nil)
		s.readBack(t, ctx, k, v2)
	}
	// Keys of every length 1..16 are distinct keys.
	for l := 1; l <= nvmekv.MaxKeyLen; l++ {
		k := bytes.Repeat([]byte{'K'}, l)
		copy(k, s.prefix[:min(l, len(s.prefix))])
		expect(t, fmt.Sprintf("Store key of %d bytes", l), s.tg.NS.Store(ctx, k, []byte{byte(l)}, 0), nil)
	}
	for l := 1; l <= nvmekv.MaxKeyLen; l++ {
		k := bytes.Repeat([]byte{'K'}, l)
		copy(k, s.prefix[:min(l, len(s.prefix))])
		s.readBack(t, ctx, k, []byte{byte(l)})
		expect(t, "Delete", s.tg.NS.Delete(ctx, k), nil)
	}
}

// shortBuffer: a Retrieve into a smaller buffer returns a prefix and the
// stored size in DW0 (KV Command Set 1.0 §3.2.3).
func (s *suite) shortBuffer(t *testing.T) {
	ctx := ctxT(t)
	k, v := s.key("short"), pattern(5000, 7)
	expect(t, "Store", s.tg.NS.Store(ctx, k, v, 0), nil)
	buf := make([]byte, 1000)
	n, err := s.tg.NS.Retrieve(ctx, k, buf)
	if err != nil || n != len(v) || !bytes.Equal(buf, v[:1000]) {
		t.Fatalf("Retrieve into 1000 bytes = size %d, %v; want size %d and the first 1000 bytes", n, err, len(v))
	}
}

func (s *suite) missing(t *testing.T) {
	ctx := ctxT(t)
	k := s.key("nokey")
	_, err := s.tg.NS.Retrieve(ctx, k, make([]byte, 64))
	expect(t, "Retrieve of a missing key", err, nvmekv.ErrKeyNotFound)
	expect(t, "Delete of a missing key", s.tg.NS.Delete(ctx, k), nvmekv.ErrKeyNotFound)
	ok, err := s.tg.NS.Exist(ctx, k)
	if ok || err != nil {
		t.Fatalf("Exist of a missing key = %v, %v", ok, err)
	}
	var se *nvmekv.StatusError
	if !errors.As(s.tg.NS.Delete(ctx, k), &se) || se.SCT != 0 || se.SC != nvmekv.SCKeyNotExists {
		t.Fatalf("Delete of a missing key: %v, want status SCT 0 SC 0x87", se)
	}
}

func (s *suite) storeOptions(t *testing.T) {
	ctx := ctxT(t)
	k, v := s.key("opts"), []byte("first")
	expect(t, "Store must-exist of a new key", s.tg.NS.Store(ctx, k, v, nvmekv.StoreMustExist), nvmekv.ErrKeyNotFound)
	if ok, _ := s.tg.NS.Exist(ctx, k); ok {
		t.Fatal("a refused must-exist Store created the key")
	}
	expect(t, "Store must-not-exist of a new key", s.tg.NS.Store(ctx, k, v, nvmekv.StoreMustNotExist), nil)
	expect(t, "Store must-not-exist of an existing key", s.tg.NS.Store(ctx, k, []byte("second"), nvmekv.StoreMustNotExist), nvmekv.ErrKeyExists)
	s.readBack(t, ctx, k, v)
	v3 := []byte("third value")
	expect(t, "Store must-exist of an existing key", s.tg.NS.Store(ctx, k, v3, nvmekv.StoreMustExist), nil)
	s.readBack(t, ctx, k, v3)
}

func (s *suite) valueTooBig(t *testing.T) {
	ctx := ctxT(t)
	k, v := s.key("big"), []byte("small")
	expect(t, "Store", s.tg.NS.Store(ctx, k, v, 0), nil)
	err := s.tg.NS.Store(ctx, k, make([]byte, s.lim.MaxValueLen+1), 0)
	expect(t, fmt.Sprintf("Store of %d bytes (max %d)", s.lim.MaxValueLen+1, s.lim.MaxValueLen), err, nvmekv.ErrInvalidValueSize)
	s.readBack(t, ctx, k, v)
}

// keySize: key lengths 0 and 17 get Invalid Key Size from the device; the
// encoder never builds them, so they go raw.
func (s *suite) keySize(t *testing.T) {
	ctx := ctxT(t)
	_, err := nvmekv.EncodeStore(s.tg.NSID, make([]byte, 17), 1, 0)
	expect(t, "EncodeStore of a 17-byte key", err, nvmekv.ErrInvalidKeySize)
	if s.tg.Raw == nil {
		t.Skip("no raw command path: key lengths 0 and 17 are checked where Target.Raw is set")
	}
	for _, tc := range []struct {
		name string
		kl   uint32
		op   nvmekv.Opcode
		data int
	}{{"Store KL 17", 17, nvmekv.OpStore, 8}, {"Store KL 0", 0, nvmekv.OpStore, 8}, {"Retrieve KL 17", 17, nvmekv.OpRetrieve, 8},
		{"Exist KL 0", 0, nvmekv.OpExist, 0}, {"Delete KL 255", 255, nvmekv.OpDelete, 0}} {
		c := nvmekv.Command{Opcode: uint8(tc.op), NSID: s.tg.NSID, CDW10: uint32(tc.data), CDW11: tc.kl}
		nvmekv.PackKey(&c, s.key("kl"))
		res, _, err := s.tg.Raw(ctx, c, make([]byte, tc.data))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var se *nvmekv.StatusError
		if !errors.As(nvmekv.DecodeResult(tc.op, res), &se) || se.SC != nvmekv.SCInvalidKeySize || se.SCT != 0 {
			t.Fatalf("%s: cqe.res %#x, want Invalid Key Size (SC 0x86)", tc.name, res)
		}
	}
}

func (s *suite) deleteExist(t *testing.T) {
	ctx := ctxT(t)
	k := s.key("del")
	expect(t, "Store", s.tg.NS.Store(ctx, k, []byte("x"), 0), nil)
	if ok, err := s.tg.NS.Exist(ctx, k); !ok || err != nil {
		t.Fatalf("Exist after Store = %v, %v", ok, err)
	}
	expect(t, "Delete", s.tg.NS.Delete(ctx, k), nil)
	if ok, err := s.tg.NS.Exist(ctx, k); ok || err != nil {
		t.Fatalf("Exist after Delete = %v, %v", ok, err)
	}
	_, err := s.tg.NS.Retrieve(ctx, k, make([]byte, 8))
	expect(t, "Retrieve after Delete", err, nvmekv.ErrKeyNotFound)
}

// listPaging stores keys under a fresh prefix and pages through them with
// a buffer that holds a few keys, each page starting just after the last
// key of the one before.
func (s *suite) listPaging(t *testing.T) {
	ctx := ctxT(t)
	pfx := s.prefix + "L"
	var want [][]byte
	for i := range 37 {
		k := []byte(fmt.Sprintf("%s%03d", pfx, i*7%37))
		expect(t, "Store", s.tg.NS.Store(ctx, k, []byte{byte(i)}, 0), nil)
		want = append(want, k)
	}
	slices.SortFunc(want, bytes.Compare)
	const per = 5
	bufBytes := 4 + per*nvmekv.ListEntryBytes(len(want[0]))
	var got [][]byte
	start := []byte(pfx)
	for pages := 0; ; pages++ {
		if pages > len(want)+2 {
			t.Fatalf("List paging did not end after %d pages", pages)
		}
		keys, total, err := s.tg.NS.List(ctx, start, bufBytes)
		if err != nil {
			t.Fatalf("List from %q: %v", start, err)
		}
		if len(keys) > per || int(total) < len(keys) {
			t.Fatalf("List from %q into %d bytes: %d keys, DW0 %d", start, bufBytes, len(keys), total)
		}
		done := len(keys) == 0
		for _, k := range keys {
			if bytes.Compare(k, start) < 0 {
				t.Fatalf("List from %q returned smaller key %q", start, k)
			}
			if !bytes.HasPrefix(k, []byte(pfx)) {
				done = true
				break
			}
			got = append(got, append([]byte(nil), k...))
		}
		if done {
			break
		}
		start = successor(got[len(got)-1])
	}
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("List pages gave %d keys %q, want %d %q", len(got), got, len(want), want)
	}
}

// successor is the smallest key greater than k in List order.
func successor(k []byte) []byte {
	if len(k) < nvmekv.MaxKeyLen {
		return append(append([]byte(nil), k...), 0)
	}
	s := append([]byte(nil), k...)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]++; s[i] != 0 {
			return s
		}
	}
	return s
}

// linkedChain: in one Do, a failing command cancels the rest of its Link
// chain and nothing after it runs; a separate chain still runs.
func (s *suite) linkedChain(t *testing.T) {
	ctx := ctxT(t)
	a, b, c := s.key("chA"), s.key("chB"), s.key("chC")
	ops := []*nvmekv.Op{
		{Code: nvmekv.OpStore, Key: a, Buf: []byte("A"), Options: nvmekv.StoreMustExist, Link: true},
		{Code: nvmekv.OpStore, Key: b, Buf: []byte("B")},
		{Code: nvmekv.OpStore, Key: c, Buf: []byte("C")},
	}
	if err := s.tg.NS.Do(ctx, ops...); err != nil {
		t.Fatalf("Do: %v", err)
	}
	expect(t, "first of the chain", ops[0].Err, nvmekv.ErrKeyNotFound)
	expect(t, "second of the chain", ops[1].Err, nvmekv.ErrCanceled)
	expect(t, "next chain", ops[2].Err, nil)
	if ok, _ := s.tg.NS.Exist(ctx, b); ok {
		t.Fatal("a canceled Store ran")
	}
	s.readBack(t, ctx, c, []byte("C"))
}

// noClose keeps KV.Close from closing the namespace under test.
type noClose struct{ nvmekv.Namespace }

func (noClose) Close() error { return nil }

// chunked: values larger than one Store go through nvmekv.KV as linked
// chains of chunks, header last, and read back whole.
func (s *suite) chunked(t *testing.T) {
	ctx := ctxT(t)
	kv, err := nvmekv.NewKV(noClose{s.tg.NS}, nvmekv.KVOptions{})
	if err != nil {
		t.Fatalf("NewKV: %v", err)
	}
	defer kv.Close()
	for i, n := range []int{s.lim.MaxValueLen - 100, s.lim.MaxValueLen*3 + 17, 1 << 20} {
		key := []byte(fmt.Sprintf("%s/chunked/%d", s.prefix, i))
		v := pattern(n, uint64(1000+i))
		expect(t, fmt.Sprintf("Put %d bytes", n), kv.Put(ctx, key, v, nvmekv.Meta{}), nil)
		got, _, err := kv.Get(ctx, nil, key)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("Get of a %d-byte value: %d bytes, %v", n, len(got), err)
		}
		expect(t, "KV.Delete", kv.Delete(ctx, key), nil)
		if _, _, err := kv.Get(ctx, nil, key); !errors.Is(err, nvmekv.ErrKeyNotFound) {
			t.Fatalf("Get after Delete: %v", err)
		}
	}
	if st := kv.Stats(); st.ChunksWritten == 0 {
		t.Fatalf("no chunk was written (%+v): the values did not exceed one Store", st)
	}
}
