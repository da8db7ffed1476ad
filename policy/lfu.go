package policy

import (
	"fmt"
	"math"
)

// The W-TinyLFU constants, as Caffeine and its Go port otter use them
// (Einziger, Eytan, Friedman, Manes: "Adaptive Software Cache Management",
// Middleware 2018, for the hill climber).
const (
	lfuWindowShare    = 0.01   // the window's first share of the capacity
	lfuProtectedShare = 0.80   // protected's share of the main space
	climbRestart      = 0.05   // a hit-rate change this large restarts the climb
	climbStep         = 0.0625 // a climb step, as a share of the capacity
	climbDecay        = 0.98   // each step is this much smaller than the last
	admitRandomAbove  = 5      // a candidate this frequent is admitted 1 in 128 when it loses
	queueTransferMax  = 1000   // nodes moved between queues in one climb step at most
)

// LFUOptions configure an LFU.
type LFUOptions struct {
	// Capacity is the most weight (bytes) the resident items may have.
	Capacity int64
	// SampleFactor: the sketch halves its counters, and the hill climber
	// judges its last step, every SampleFactor × (items the sketch is
	// sized for) accesses (default 10, TinyLFU's W/C).
	SampleFactor int
	// Items is the expected number of resident items (default: Capacity
	// / 1 KiB, at least 64), which sizes the frequency sketch once the
	// resident items weigh half the capacity (Caffeine sizes its sketch
	// that late too); before, the sketch is sized for the resident items,
	// and it grows with their count, keeping its estimates (freqSketch.grow).
	Items int
	// NoClimb keeps the window at its first share (tests, comparisons).
	NoClimb bool
}

// LFU is a weighted W-TinyLFU eviction policy with an adaptive window:
// the policy Caffeine uses, here over intrusive Nodes so that its owner
// keeps the items and their bytes wherever it likes (tier keeps them in
// off-heap arenas). A new item enters the window (LRU); items leaving the
// window compete with the probation queue's least recently used item for
// the main space, the more frequent one by the sketch staying (TinyLFU
// admission); a probation hit moves to protected. A hill climber moves
// capacity between the window and the main space while that raises the
// hit rate. Every eviction is reported to the caller's evict function
// before the method returns, so nothing is dropped silently.
//
// An LFU is not safe for concurrent use: its owner serializes every call.
type LFU struct {
	o                            LFUOptions
	sketch                       freqSketch
	window, probation, protected lruList
	weight                       int64 // every queue's weight
	windowMax, protectedMax      int64
	// the hill climber
	step               float64
	hits, misses       int64
	prevHitRate        float64
	adjust             int64
	rnd                uint64 // xorshift state for the random admission: deterministic runs
	evictions, admits  uint64
	rejects, randAdmit uint64
	resident           int
}

// NewLFU returns an empty LFU.
func NewLFU(o LFUOptions) (*LFU, error) {
	if o.Capacity < 1 {
		return nil, fmt.Errorf("%w: LFU capacity %d must be positive", ErrInvalidOptions, o.Capacity)
	}
	if o.SampleFactor == 0 {
		o.SampleFactor = 10
	}
	if o.Items == 0 {
		o.Items = int(min(o.Capacity/1024, math.MaxInt32))
	}
	p := &LFU{o: o, rnd: 0x9e3779b97f4a7c15}
	p.sketch.ensure(0, o.SampleFactor)
	p.setCapacity(o.Capacity)
	return p, nil
}

func (p *LFU) setCapacity(c int64) {
	p.o.Capacity = c
	p.windowMax = c - int64(float64(c)*(1-lfuWindowShare))
	p.protectedMax = int64(lfuProtectedShare * float64(c-p.windowMax))
	p.step = -climbStep * float64(c)
	p.hits, p.misses = 0, 0
}

// Capacity is the most weight the resident items may have.
func (p *LFU) Capacity() int64 { return p.o.Capacity }

// Weight is the resident items' weight.
func (p *LFU) Weight() int64 { return p.weight }

// Len is the number of resident items.
func (p *LFU) Len() int { return p.resident }

// SketchBytes is the Go heap the frequency sketch's table takes: sized
// for the resident items, and for Items once they weigh half the
// capacity (growSketch).
func (p *LFU) SketchBytes() int64 { return int64(len(p.sketch.table)) * 8 }

// Frequency is the sketch's estimate of hash's recent accesses (0-15).
func (p *LFU) Frequency(hash uint64) int { return p.sketch.frequency(hash) }

// Access records a hit of a resident item: it is counted, and moves to the
// most recently used end of its queue (from probation to protected). A
// node that is not resident is ignored.
func (p *LFU) Access(n *Node) {
	if !n.saturated || n.satEpoch != p.sketch.epoch {
		// An estimate already at the maximum stays there until the next
		// reset: the access would change nothing in the sketch.
		n.saturated, n.satEpoch = p.sketch.increment(n.hash), p.sketch.epoch
	}
	p.hits++
	p.reorder(n)
	p.maybeClimb()
}

// reorder moves n to the most recently used end of its queue, from
// probation to protected.
func (p *LFU) reorder(n *Node) {
	switch n.queue {
	case Window:
		p.window.moveToBack(n)
	case Probation:
		if int64(n.weight) > p.protectedMax {
			p.probation.moveToBack(n)
			break
		}
		p.probation.remove(n)
		n.queue = Protected
		p.protected.pushBack(n)
		p.demoteProtected()
	case Protected:
		p.protected.moveToBack(n)
	}
}

// Add makes n resident with the key's hash and weight, as a miss that
// brought the item in: it enters the window, and the policy evicts until
// the weight fits the capacity, calling evict for each item it evicts —
// possibly n itself, or items leaving the window that lose the admission.
// evict runs with the owner's lock held and must not call the LFU.
func (p *LFU) Add(n *Node, hash uint64, weight uint32, evict func(*Node)) {
	if n.queue != NotResident {
		panic("policy: LFU.Add of a resident node")
	}
	if n.hash != hash {
		n.hash = hash // written once: the owner may read it without the lock afterwards
	}
	n.weight = weight
	p.sketch.increment(hash)
	p.misses++
	p.resident++
	p.weight += int64(weight)
	p.growSketch()
	n.queue = Window
	p.window.pushBack(n)
	p.evict(evict)
	p.maybeClimb()
}

// Update changes a resident item's weight (the item was overwritten) and
// moves it to the most recently used end of its queue, as a hit does but
// without counting it in the sketch (a write is no read); it evicts as
// Add does. A node that is not resident is ignored.
func (p *LFU) Update(n *Node, weight uint32, evict func(*Node)) {
	if n.queue == NotResident {
		return
	}
	d := int64(weight) - int64(n.weight)
	n.weight = weight
	p.weight += d
	p.growSketch()
	switch n.queue {
	case Window:
		p.window.weight += d
	case Probation:
		p.probation.weight += d
	case Protected:
		p.protected.weight += d
	}
	p.reorder(n)
	p.evict(evict)
}

// growSketch sizes the sketch for twice the resident items, and for
// twice Items once they weigh half the capacity: a table sized for the
// capacity from the start is one cache miss a hit in a cache far from
// full (16 MiB for a GiB of DRAM), and it does not decide anything until
// the weight nears the capacity. Growing keeps every estimate.
func (p *LFU) growSketch() {
	if p.resident > p.sketch.items/2 {
		p.sketch.ensure(2*p.resident, p.o.SampleFactor)
	}
	if p.weight >= p.o.Capacity/2 && p.sketch.items < 2*p.o.Items {
		p.sketch.ensure(2*p.o.Items, p.o.SampleFactor)
	}
}

// Remove takes a resident item out (deleted, or overwritten by a copy the
// owner keeps elsewhere). A node that is not resident is ignored.
func (p *LFU) Remove(n *Node) {
	switch n.queue {
	case NotResident:
		return
	case Window:
		p.window.remove(n)
	case Probation:
		p.probation.remove(n)
	case Protected:
		p.protected.remove(n)
	}
	n.queue = NotResident
	p.weight -= int64(n.weight)
	p.resident--
}

// Evict evicts items until the weight fits capacity c less reserve (the
// owner needs room the policy does not know of), calling evict for each.
func (p *LFU) Evict(reserve int64, evict func(*Node)) {
	c := p.o.Capacity
	p.o.Capacity = max(c-reserve, 0)
	p.evict(evict)
	p.o.Capacity = c
}

func (p *LFU) drop(n *Node, evict func(*Node)) {
	p.Remove(n)
	p.evictions++
	evict(n)
}

// evict moves the window's excess to probation, then evicts until the
// weight fits the capacity: each item leaving the window (a candidate)
// against probation's least recently used item (the victim), the less
// frequent one going. When both run out it takes from protected, then
// the window.
func (p *LFU) evict(evict func(*Node)) {
	var first *Node
	for n := p.window.head; n != nil && p.window.weight > p.windowMax; {
		next := n.next
		p.window.remove(n)
		n.queue = Probation
		p.probation.pushBack(n)
		if first == nil {
			first = n
		}
		n = next
	}
	candidate, victim := first, p.probation.head
	fromWindow, victimQ := false, Probation
	for p.weight > p.o.Capacity {
		if candidate == nil && !fromWindow {
			candidate, fromWindow = p.window.head, true
		}
		if candidate == nil && victim == nil {
			switch victimQ {
			case Probation:
				victim, victimQ = p.protected.head, Protected
				continue
			case Protected:
				victim, victimQ = p.window.head, Window
				continue
			}
			return // nothing left: the weight is the owner's to fix
		}
		switch {
		case victim == nil:
			next := candidate.next
			p.drop(candidate, evict)
			candidate = next
		case candidate == nil:
			next := victim.next
			p.drop(victim, evict)
			victim = next
		case candidate == victim:
			next := victim.next
			p.drop(victim, evict)
			candidate, victim = nil, next
		case int64(candidate.weight) > p.o.Capacity:
			next := candidate.next
			p.drop(candidate, evict)
			candidate = next
		case p.admit(candidate.hash, victim.hash):
			next := victim.next
			p.drop(victim, evict)
			victim = next
			candidate = candidate.next
			p.admits++
		default:
			next := candidate.next
			p.drop(candidate, evict)
			candidate = next
			p.rejects++
		}
	}
}

// admit reports whether the candidate should take the victim's place: it
// is more frequent; or both were seen at most once, and the newer stays
// (among keys nobody read again a burst of fresh writes keeps the newest,
// as an LRU would: a key just written stays readable while DRAM holds keys
// the policy values less or no more, at a cost of 0.3 points of hit ratio
// in bench/ against TinyLFU's strict rule); or, when it is frequent
// itself and loses, at random 1 in 128 (so that an attacker cannot keep a
// hot key out by making its victims look hotter still).
func (p *LFU) admit(candidate, victim uint64) bool {
	cf, vf := p.sketch.frequency(candidate), p.sketch.frequency(victim)
	if cf > vf || cf == vf && vf <= 1 {
		return true
	}
	if cf > admitRandomAbove {
		p.rnd ^= p.rnd << 13
		p.rnd ^= p.rnd >> 7
		p.rnd ^= p.rnd << 17
		if p.rnd&127 == 0 {
			p.randAdmit++
			return true
		}
	}
	return false
}

// demoteProtected moves protected's least recently used items to
// probation while protected is over its share.
func (p *LFU) demoteProtected() {
	for i := 0; i < queueTransferMax && p.protected.weight > p.protectedMax; i++ {
		n := p.protected.head
		if n == nil {
			return
		}
		p.protected.remove(n)
		n.queue = Probation
		p.probation.pushBack(n)
	}
}

// maybeClimb judges the last step of the window's size once a sample of
// accesses is complete, and takes the next: the same direction while the
// hit rate improves, the other way when it fell; a large change restarts
// with a full step.
func (p *LFU) maybeClimb() {
	if p.o.NoClimb || p.hits+p.misses < p.sketch.sampleSize {
		return
	}
	rate := float64(p.hits) / float64(p.hits+p.misses)
	change := rate - p.prevHitRate
	amount := p.step
	if change < 0 {
		amount = -p.step
	}
	if math.Abs(change) >= climbRestart {
		p.step = math.Copysign(climbStep*float64(p.o.Capacity), amount)
	} else {
		p.step = climbDecay * amount
	}
	p.prevHitRate = rate
	p.hits, p.misses = 0, 0
	p.adjust = int64(amount)
	switch {
	case p.adjust > 0:
		p.growWindow(p.adjust)
	case p.adjust < 0:
		p.shrinkWindow(-p.adjust)
	}
}

// growWindow moves up to quota of the main space's share to the window,
// with the main space's least recently used items.
func (p *LFU) growWindow(quota int64) {
	quota = min(quota, p.protectedMax)
	p.protectedMax -= quota
	p.windowMax += quota
	p.demoteProtected()
	for i := 0; i < queueTransferMax; i++ {
		n, from := p.probation.head, &p.probation
		if n == nil || int64(n.weight) > quota {
			n, from = p.protected.head, &p.protected
		}
		if n == nil || int64(n.weight) > quota {
			break
		}
		quota -= int64(n.weight)
		from.remove(n)
		n.queue = Window
		p.window.pushBack(n)
	}
	// What no item filled goes back.
	p.protectedMax += quota
	p.windowMax -= quota
}

// shrinkWindow moves up to quota of the window's share to the main space,
// with the window's least recently used items.
func (p *LFU) shrinkWindow(quota int64) {
	quota = min(quota, max(p.windowMax-1, 0))
	p.protectedMax += quota
	p.windowMax -= quota
	for i := 0; i < queueTransferMax; i++ {
		n := p.window.head
		if n == nil || int64(n.weight) > quota {
			break
		}
		quota -= int64(n.weight)
		p.window.remove(n)
		n.queue = Probation
		p.probation.pushBack(n)
	}
	p.protectedMax -= quota
	p.windowMax += quota
}

// LFUStats are an LFU's counters.
type LFUStats struct {
	Items                                          int
	Weight, Capacity                               int64
	WindowWeight, ProbationWeight, ProtectedWeight int64
	WindowMax, ProtectedMax                        int64
	Evictions, Admits, Rejects, RandomAdmits       uint64
}

// Stats returns the LFU's counters.
func (p *LFU) Stats() LFUStats {
	return LFUStats{Items: p.resident, Weight: p.weight, Capacity: p.o.Capacity,
		WindowWeight: p.window.weight, ProbationWeight: p.probation.weight, ProtectedWeight: p.protected.weight,
		WindowMax: p.windowMax, ProtectedMax: p.protectedMax,
		Evictions: p.evictions, Admits: p.admits, Rejects: p.rejects, RandomAdmits: p.randAdmit}
}
