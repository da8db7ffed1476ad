package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

type lfuItem struct {
	Node
	id int
}

// lfuModel drives an LFU with random adds, updates, removes and accesses
// of weighted items and checks after every step that the weight adds up,
// fits the capacity, and that every item left the LFU exactly once, by
// eviction or by Remove. It returns the order of the evictions.
func lfuModel(t *testing.T, seed uint64, steps int) []int {
	t.Helper()
	p, err := NewLFU(LFUOptions{Capacity: 64 << 10, Items: 256})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	items := map[int]*lfuItem{}
	var order []int
	evicted := func(n *Node) {
		it := (*lfuItem)(unsafe.Pointer(n)) // Node is lfuItem's first field
		if _, ok := items[it.id]; !ok {
			t.Fatalf("item %d evicted, but it was not resident", it.id)
		}
		if n.Resident() {
			t.Fatalf("item %d reported evicted while still resident", it.id)
		}
		delete(items, it.id)
		order = append(order, it.id)
	}
	for step := 0; step < steps; step++ {
		id := int(r.ExpFloat64() * 300) // skewed: some ids come back often
		w := uint32(1 + r.IntN(2048))
		switch op := r.IntN(10); {
		case op < 5:
			if it, ok := items[id]; ok {
				p.Access(&it.Node)
				continue
			}
			it := &lfuItem{id: id}
			items[id] = it
			p.Add(&it.Node, uint64(id)*0x9e3779b97f4a7c15, w, evicted)
		case op < 7:
			if it, ok := items[id]; ok {
				p.Update(&it.Node, w, evicted)
			}
		case op < 8:
			if it, ok := items[id]; ok {
				p.Remove(&it.Node)
				delete(items, id)
			}
		default:
			if it, ok := items[id]; ok {
				p.Access(&it.Node)
			}
		}
		var sum int64
		for _, it := range items {
			if !it.Resident() {
				t.Fatalf("step %d: item %d in the model is not resident", step, it.id)
			}
			sum += int64(it.Weight())
		}
		st := p.Stats()
		if sum != p.Weight() || st.Items != len(items) {
			t.Fatalf("step %d: LFU weight %d over %d items, the model %d over %d", step, p.Weight(), st.Items, sum, len(items))
		}
		if p.Weight() > p.Capacity() {
			t.Fatalf("step %d: weight %d over the capacity %d", step, p.Weight(), p.Capacity())
		}
		if st.WindowWeight+st.ProbationWeight+st.ProtectedWeight != p.Weight() {
			t.Fatalf("step %d: queues weigh %d+%d+%d, the LFU %d", step, st.WindowWeight, st.ProbationWeight, st.ProtectedWeight, p.Weight())
		}
		if st.WindowMax+st.ProtectedMax > p.Capacity() || st.WindowMax < 0 || st.ProtectedMax < 0 {
			t.Fatalf("step %d: window max %d + protected max %d outside the capacity %d", step, st.WindowMax, st.ProtectedMax, p.Capacity())
		}
	}
	return order
}

// TestLFUModel is P7: the resident weight is the sum of the resident
// items' weights and never exceeds the capacity once a call returned;
// every item leaves exactly once, by eviction (reported) or Remove; the
// queues' weights add up to it and the climber keeps the window and
// protected shares within the capacity.
func TestLFUModel(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		lfuModel(t, seed, 60000)
	}
}

// TestLFUDeterministic is P10: the same calls give the same evictions in
// the same order (no clock, no randomness but a fixed seed), so a hit
// ratio does not depend on how busy the machine is.
func TestLFUDeterministic(t *testing.T) {
	a, b := lfuModel(t, 9, 30000), lfuModel(t, 9, 30000)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("two runs of the same calls evicted differently")
	}
	if len(a) == 0 {
		t.Fatal("the model evicted nothing: it does not fill the LFU")
	}
}

// TestLFUScanResistance is P8: items read a few times keep their places
// against a scan of one-time items many times the capacity.
func TestLFUScanResistance(t *testing.T) {
	p, _ := NewLFU(LFUOptions{Capacity: 100 * 100, Items: 100})
	hot := make([]*lfuItem, 80)
	drop := func(*Node) {}
	for i := range hot {
		hot[i] = &lfuItem{id: i}
		p.Add(&hot[i].Node, uint64(i+1)*0x9e3779b97f4a7c15, 100, drop)
	}
	for round := 0; round < 3; round++ {
		for _, it := range hot {
			p.Access(&it.Node)
		}
	}
	for i := 0; i < 2000; i++ { // 20 capacities of one-time items
		it := &lfuItem{id: 1000 + i}
		p.Add(&it.Node, uint64(1000+i)*0xbf58476d1ce4e5b9, 100, drop)
	}
	kept := 0
	for _, it := range hot {
		if it.Resident() {
			kept++
		}
	}
	if kept < 75 {
		t.Fatalf("%d of 80 frequently read items survived a scan of one-time items", kept)
	}
}

// TestLFUKeepsNewestOfOneTimeItems is P9: when nothing is read twice, a
// burst of fresh items keeps the newest ones, as an LRU would.
func TestLFUKeepsNewestOfOneTimeItems(t *testing.T) {
	p, _ := NewLFU(LFUOptions{Capacity: 100 * 100, Items: 100})
	var all []*lfuItem
	for i := 0; i < 500; i++ {
		it := &lfuItem{id: i}
		all = append(all, it)
		p.Add(&it.Node, uint64(i+1)*0x9e3779b97f4a7c15, 100, func(*Node) {})
	}
	for _, it := range all[450:] {
		if !it.Resident() {
			t.Fatalf("item %d of the newest 50 (of 500 written once into room for 100) was evicted", it.id)
		}
	}
}

// TestLFUAdmitsTheMoreFrequent: a candidate read more often than the
// probation victim takes its place.
func TestLFUAdmitsTheMoreFrequent(t *testing.T) {
	p, _ := NewLFU(LFUOptions{Capacity: 100 * 100, Items: 100, NoClimb: true})
	var old []*lfuItem
	for i := 0; i < 100; i++ {
		it := &lfuItem{id: i}
		old = append(old, it)
		p.Add(&it.Node, uint64(i+1)*0x9e3779b97f4a7c15, 100, func(*Node) {})
	}
	// The newcomer's key was asked for (a miss) several times first.
	h := uint64(0x5a5a5a5a5a5a5a5a)
	for i := 0; i < 5; i++ {
		p.sketch.increment(h)
	}
	it := &lfuItem{id: 777}
	p.Add(&it.Node, h, 100, func(*Node) {})
	for i := 0; i < 10; i++ { // push it out of the window into the main space
		f := &lfuItem{id: 2000 + i}
		p.Add(&f.Node, uint64(2000+i)*0x94d049bb133111eb, 100, func(*Node) {})
	}
	if !it.Resident() {
		t.Fatal("a candidate seen 6 times lost its place to items seen once")
	}
}

// TestSketchGrowKeepsEstimates: growing the LFU's sketch (P11) keeps
// every key's estimate, the sample's count and the epoch, and the LFU
// sizes it for its resident items until they weigh half its capacity,
// then for Items.
func TestSketchGrowKeepsEstimates(t *testing.T) {
	var s freqSketch
	s.ensure(64, 10)
	hs := make([]uint64, 300)
	for i := range hs {
		hs[i] = uint64(i+1) * 0x9e3779b97f4a7c15
		for range i % 17 {
			s.increment(hs[i])
		}
	}
	before := make([]int, len(hs))
	for i, h := range hs {
		before[i] = s.frequency(h)
	}
	size, epoch := s.size, s.epoch
	for _, items := range []int{128, 1000, 1 << 14} {
		s.ensure(items, 10)
		if len(s.table) < items {
			t.Fatalf("ensure(%d): table of %d words", items, len(s.table))
		}
		for i, h := range hs {
			if f := s.frequency(h); f != before[i] {
				t.Fatalf("table of %d words: key %d estimated %d, %d before it grew", len(s.table), i, f, before[i])
			}
		}
		if s.size != size || s.epoch != epoch {
			t.Fatalf("table of %d words: size %d epoch %d, before %d %d", len(s.table), s.size, s.epoch, size, epoch)
		}
	}

	p, _ := NewLFU(LFUOptions{Capacity: 100 << 20, Items: 100_000})
	var items []*lfuItem
	add := func(n int, weight uint32) {
		for range n {
			it := &lfuItem{id: len(items)}
			items = append(items, it)
			p.Add(&it.Node, uint64(len(items))*0x94d049bb133111eb, weight, func(*Node) {})
		}
	}
	add(1000, 1000)
	if got, want := len(p.sketch.table), 2048; got != want {
		t.Fatalf("1000 items far below half the capacity: sketch of %d words, want %d (two a resident item)", got, want)
	}
	add(1, 50<<20)
	if got, want := len(p.sketch.table), 1<<18; got != want {
		t.Fatalf("items weighing half the capacity: sketch of %d words, want %d (two per Items, a power of two)", got, want)
	}
}
