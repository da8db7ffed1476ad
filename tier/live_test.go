package tier

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// testKind is the kind of the tests' live structure, a list of byte
// strings (testList); the cache never interprets it.
const testKind Kind = 9

// testList is a live structure for the tier's tests: a list of elements.
// Its record is 'L', then each element as a uvarint length and its bytes.
type testList struct {
	items [][]byte
	size  int // the record's size
}

var errTestCorrupt = errors.New("test list: corrupt record")

func (l *testList) HeapBytes() int64 {
	n := int64(48 + 24*cap(l.items))
	for _, it := range l.items {
		n += int64(cap(it))
	}
	return n
}

func (l *testList) RecordSize() int { return l.size }

func (l *testList) AppendRecord(dst []byte) []byte {
	dst = append(dst, 'L')
	for _, it := range l.items {
		dst = binary.AppendUvarint(dst, uint64(len(it)))
		dst = append(dst, it...)
	}
	return dst
}

func (l *testList) push(v []byte) {
	l.items = append(l.items, append([]byte(nil), v...))
	l.size += uvarintSize(len(v)) + len(v)
}

func (l *testList) pop() []byte {
	v := l.items[0]
	l.items = l.items[1:]
	l.size -= uvarintSize(len(v)) + len(v)
	return v
}

func uvarintSize(n int) int { return len(binary.AppendUvarint(nil, uint64(n))) }

// testLists is the LiveKind of testList.
type testLists struct{}

func (testLists) Kind() Kind { return testKind }

func (testLists) New() Live { return &testList{size: 1} }

func (testLists) Load(rec []byte) (Live, error) {
	if len(rec) == 0 || rec[0] != 'L' {
		return nil, errTestCorrupt
	}
	l := &testList{size: len(rec)}
	for b := rec[1:]; len(b) > 0; {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return nil, errTestCorrupt
		}
		l.items = append(l.items, append([]byte(nil), b[w:w+int(n)]...))
		b = b[w+int(n):]
	}
	return l, nil
}

// testRecord is the record of a list of items.
func testRecord(items ...[]byte) []byte {
	l := &testList{size: 1}
	for _, it := range items {
		l.push(it)
	}
	return l.AppendRecord(nil)
}

// editPush pushes v onto key's test list, creating it.
func editPush(c *Cache, key, v []byte) error {
	_, err := c.Edit(key, testLists{}, true, func(lv Live) (EditResult, error) {
		lv.(*testList).push(v)
		return Changed, nil
	})
	return err
}

// editPop pops key's test list's first element; the list goes with its
// last one.
func editPop(c *Cache, key []byte) (v []byte, exists bool, err error) {
	exists, err = c.Edit(key, testLists{}, false, func(lv Live) (EditResult, error) {
		l := lv.(*testList)
		v = l.pop()
		if len(l.items) == 0 {
			return Emptied, nil
		}
		return Changed, nil
	})
	return v, exists, err
}

// readRecord is key's test list's record, read through Read.
func readRecord(c *Cache, key []byte) (rec []byte, exists bool, err error) {
	exists, err = c.Read(key, testLists{}, func(lv Live) error {
		rec = lv.AppendRecord(nil)
		return nil
	})
	return rec, exists, err
}

// TestLiveEditInPlace is T44 in the DRAM tiers: Edit creates, changes and
// empties a structure the key keeps live (hot's items and bytes count
// it), Read and ViewAny see every change, a string Set replaces it, the
// kinds are checked, and an error from the function changes nothing.
func TestLiveEditInPlace(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := []byte("list")
	for i := range 5 {
		if err := editPush(c, k, []byte(fmt.Sprint("e", i))); err != nil {
			t.Fatal(err)
		}
	}
	want := testRecord([]byte("e0"), []byte("e1"), []byte("e2"), []byte("e3"), []byte("e4"))
	if rec, ok, err := readRecord(c, k); !ok || err != nil || !bytes.Equal(rec, want) {
		t.Fatalf("Read: %q %v %v, want %q", rec, ok, err, want)
	}
	if v, kind, _, ok, _, err := c.ViewAny(nil, k); !ok || err != nil || kind != testKind || !bytes.Equal(v, want) {
		t.Fatalf("ViewAny: %q kind %d %v %v", v, kind, ok, err)
	}
	s := c.Stats()
	if s.DRAM.LiveItems != 1 || s.DRAM.LiveBytes <= 0 || s.Tiers[0].Items != 1 || s.Tiers[0].Bytes != s.DRAM.LiveBytes {
		t.Fatalf("a live structure in hot: %+v, hot %+v", s.DRAM, s.Tiers[0])
	}
	if c.Where(k) != "hot" {
		t.Fatalf("Where = %q", c.Where(k))
	}
	boom := errors.New("boom")
	if _, err := c.Edit(k, testLists{}, false, func(Live) (EditResult, error) { return Changed, boom }); err != boom {
		t.Fatalf("Edit's error: %v", err)
	}
	if _, err := c.Edit(k, otherKind{}, false, func(Live) (EditResult, error) { return Changed, nil }); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("Edit of another kind: %v", err)
	}
	if _, _, err := c.Get(nil, k); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("Get of a list: %v", err)
	}
	if _, err := c.Read(k, otherKind{}, func(Live) error { return nil }); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("Read of another kind: %v", err)
	}
	for i := range 5 {
		v, ok, err := editPop(c, k)
		if !ok || err != nil || string(v) != fmt.Sprint("e", i) {
			t.Fatalf("pop %d: %q %v %v", i, v, ok, err)
		}
	}
	if n := c.Keys(); n != 0 {
		t.Fatalf("an emptied list left %d keys", n)
	}
	if s := c.Stats(); s.DRAM.LiveItems != 0 || s.DRAM.LiveBytes != 0 {
		t.Fatalf("after the last pop: %+v", s.DRAM)
	}
	if _, ok, err := editPop(c, k); ok || err != nil {
		t.Fatalf("pop of an absent key: %v %v", ok, err)
	}
	if err := editPush(c, k, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(k, []byte("str"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := c.Get(nil, k); !ok || err != nil || string(v) != "str" {
		t.Fatalf("Get after SET over a list: %q %v %v", v, ok, err)
	}
	if s := c.Stats(); s.DRAM.LiveItems != 0 {
		t.Fatalf("a SET over a live list left it: %+v", s.DRAM)
	}
}

// TestLiveKeepsTTL: a change keeps the key's expiry (T44).
func TestLiveKeepsTTL(t *testing.T) {
	clk := newFakeClock()
	c, err := Open(smallOptions(clk))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := []byte("l")
	if err := editPush(c, k, []byte("a")); err != nil {
		t.Fatal(err)
	}
	c.Expire(k, 10*1e9)
	if err := editPush(c, k, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if ttl, ok := c.TTL(k); !ok || ttl != 10*1e9 {
		t.Fatalf("TTL after a push: %v %v", ttl, ok)
	}
	clk.Advance(11e9)
	if _, ok, _ := readRecord(c, k); ok {
		t.Fatal("an expired list reads")
	}
	if err := editPush(c, k, []byte("c")); err != nil {
		t.Fatal(err)
	}
	if rec, _, _ := readRecord(c, k); !bytes.Equal(rec, testRecord([]byte("c"))) {
		t.Fatalf("a push onto an expired list: %q", rec)
	}
	if ttl, ok := c.TTL(k); !ok || ttl >= 0 {
		t.Fatalf("a new list has an expiry: %v", ttl)
	}
}

// TestLiveWithheldFromHot is T45: live structures' heap is covered by
// hot segments withheld from the log, given back as they shrink, and when
// they would take more of hot than it can give they are demoted to warm
// records (and read and changed from there, made live again).
func TestLiveWithheldFromHot(t *testing.T) {
	o := smallOptions(newFakeClock())
	o.HotBytes, o.HotSegmentBytes, o.HotMaxValue = 64<<10, 4<<10, 4<<10
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(1, 2))
	model := map[string][][]byte{}
	elem := make([]byte, 64)
	for i := range 3000 {
		k := fmt.Sprint("l", r.IntN(20))
		for j := range elem {
			elem[j] = byte(r.Uint32())
		}
		if err := editPush(c, []byte(k), elem); err != nil {
			t.Fatal(err)
		}
		model[k] = append(model[k], append([]byte(nil), elem...))
		s := c.Stats().DRAM
		if s.LiveBytes > s.LiveWithheldBytes {
			t.Fatalf("push %d: live structures hold %d bytes, hot withholds %d", i, s.LiveBytes, s.LiveWithheldBytes)
		}
		if s.LiveBytes > c.liveLimit() {
			t.Fatalf("push %d: live structures hold %d bytes, the limit is %d", i, s.LiveBytes, c.liveLimit())
		}
	}
	s := c.Stats().DRAM
	if s.LiveDemoted == 0 || s.LiveWithheldBytes == 0 {
		t.Fatalf("20 lists of 150 × 64 B in a hot of 64 KiB: %+v", s)
	}
	for k, items := range model {
		if rec, ok, err := readRecord(c, []byte(k)); !ok || err != nil || !bytes.Equal(rec, testRecord(items...)) {
			t.Fatalf("%s: %d bytes %v %v, want %d bytes", k, len(rec), ok, err, len(testRecord(items...)))
		}
	}
	for k := range model {
		c.Delete([]byte(k))
	}
	c.liveBalance(0)
	if s := c.Stats().DRAM; s.LiveBytes != 0 || s.LiveWithheldBytes != 0 {
		t.Fatalf("after deleting every list: %+v", s)
	}
}

// checkLiveShard checks shard i's live table against its entries (its
// lock held): every entry whose copy is live names a slot that names it
// back, of its value's record size; every slot in use names an entry
// whose copy it is.
func checkLiveShard(c *Cache, i int, sh *shard) error {
	ls := &c.lt[i]
	for k, e := range sh.m {
		if e.where != memLive {
			continue
		}
		j := int(e.loc - 1)
		if j >= len(ls.slots) || ls.slots[j].e != e || ls.slots[j].v == nil {
			return fmt.Errorf("T44: live entry of %q names slot %d of %d, which is not its", k, j, len(ls.slots))
		}
		if n := ls.slots[j].v.RecordSize(); int64(n) != e.valueSize() {
			return fmt.Errorf("T44: live entry of %q has size %d, its structure's record %d", k, e.valueSize(), n)
		}
	}
	for j := range ls.slots {
		s := &ls.slots[j]
		if s.v != nil && (s.e.where != memLive || int(s.e.loc-1) != j) {
			return fmt.Errorf("T44: slot %d of shard %d is in use by an entry whose copy is elsewhere (%d, %d)", j, i, s.e.where, s.e.loc)
		}
	}
	return nil
}

// modelLiveOp runs one operation on key k's test list in c and in the
// model: a push, a pop, a Read, or ViewAny of its record.
func modelLiveOp(t *testing.T, step int, c *Cache, model map[string]modelVal, live func(string) (modelVal, bool), r *rand.Rand, k []byte) {
	t.Helper()
	ks := string(k)
	m, exists := live(ks)
	wrong := exists && m.kind != testKind
	var items [][]byte
	if exists && !wrong {
		l, err := testLists{}.Load(m.v)
		if err != nil {
			t.Fatal(err)
		}
		items = l.(*testList).items
	}
	checkErr := func(op string, err error) {
		t.Helper()
		if wrong != errors.Is(err, ErrWrongKind) || err != nil && !wrong {
			t.Fatalf("step %d: %s(%s): %v, model kind %d exists %v", step, op, k, err, m.kind, exists)
		}
	}
	switch op := r.IntN(10); {
	case op < 4:
		v := randValue(r, 300)
		if r.IntN(20) == 0 {
			v = randValue(r, 8<<10)
		}
		err := editPush(c, k, v)
		checkErr("push", err)
		if !wrong {
			exp := m.exp
			if !exists {
				exp = 0
			}
			model[ks] = modelVal{v: testRecord(append(items, v)...), exp: exp, kind: testKind}
		}
	case op < 6:
		v, ok, err := editPop(c, k)
		checkErr("pop", err)
		if ok != exists {
			t.Fatalf("step %d: pop(%s) exists %v, model %v", step, k, ok, exists)
		}
		if wrong || !exists {
			return
		}
		if !bytes.Equal(v, items[0]) {
			t.Fatalf("step %d: pop(%s) = %d bytes, model %d", step, k, len(v), len(items[0]))
		}
		if len(items) == 1 {
			delete(model, ks)
		} else {
			model[ks] = modelVal{v: testRecord(items[1:]...), exp: m.exp, kind: testKind}
		}
	case op < 9:
		rec, ok, err := readRecord(c, k)
		checkErr("Read", err)
		if ok != exists || ok && !wrong && !bytes.Equal(rec, m.v) {
			t.Fatalf("step %d: Read(%s) %v %d bytes, model %v %d bytes (where %q)", step, k, ok, len(rec), exists, len(m.v), c.Where(k))
		}
	default:
		v, kind, _, ok, _, err := c.ViewAny(nil, k)
		if err != nil || ok != exists || ok && (kind != m.kind || !bytes.Equal(v, m.v)) {
			t.Fatalf("step %d: ViewAny(%s) %v kind %d %d bytes %v, model %v kind %d %d bytes", step, k, ok, kind, len(v), err, exists, m.kind, len(m.v))
		}
	}
}

// otherKind is a LiveKind the tests' lists are not.
type otherKind struct{ testLists }

func (otherKind) Kind() Kind { return testKind + 1 }
