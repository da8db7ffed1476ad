package list

import (
	"encoding/binary"
	"unsafe"

	"github.com/tiercache/tiercache/value"
)

// Quick is a list that changes in place: a deque of packed nodes, as
// Redis's quicklist is. Each node is one buffer of at most NodeBytes
// holding a run of elements, each as a uvarint length, its bytes and its
// length again backwards (a back length, as Redis's listpack keeps one),
// so a node reads from either end. A push or a pop touches the node at
// its end (a node is reallocated larger, up to NodeBytes, when it runs
// out of room; a new one starts when it is full), an index walks the
// nodes' counts; the record (list.Version) is built only when asked for
// (AppendRecord). Elements returned alias the nodes: valid until the next
// change. A Quick is not safe for concurrent use; concurrent readers are
// fine.
type Quick struct {
	ring  []node // the nodes, a ring of a power of two (or none)
	head  int    // ring index of the first node
	n     int    // nodes in use
	count int    // elements
	body  int    // the record's body bytes: Σ ItemSize
	heap  int64  // the node buffers' and the ring's heap bytes
}

// NodeBytes is the most bytes of elements a node holds (an element
// larger than it has a node of its own). Redis's quicklist keeps 8 KiB
// per node by default; a page here, so an insert within a node moves
// little.
const NodeBytes = 4096

// node is a run of packed elements in buf[start:end].
type node struct {
	buf        []byte
	start, end int32
	count      int32
}

var quickBytes = int64(value.AllocSize(int(unsafe.Sizeof(Quick{}))))

const nodeSize = int(unsafe.Sizeof(node{}))

// NewQuick returns an empty list.
func NewQuick() *Quick { return &Quick{} }

// LoadQuick makes a Quick of a list record (Version); it copies what it
// keeps.
func LoadQuick(rec []byte) (*Quick, error) {
	n, body, err := Header(rec)
	if err != nil {
		return nil, err
	}
	q := &Quick{}
	for i := 0; i < n; i++ {
		var it []byte
		if it, body, err = Next(body); err != nil {
			return nil, err
		}
		q.push(it, false)
	}
	if len(body) != 0 {
		return nil, ErrCorrupt
	}
	return q, nil
}

// Len is the number of elements.
func (q *Quick) Len() int { return q.count }

// HeapBytes is the heap q takes: its allocations' sizes as the runtime
// rounds them (value.AllocSize).
func (q *Quick) HeapBytes() int64 { return quickBytes + q.heap }

// RecordSize is the size of q's record.
func (q *Quick) RecordSize() int { return Size(q.count, q.body) }

// AppendRecord appends q's record (Version) to dst.
func (q *Quick) AppendRecord(dst []byte) []byte {
	dst = growTo(AppendHeader(dst, q.count), len(dst)+q.RecordSize())
	for i := 0; i < q.n; i++ {
		nd := q.node(i)
		for p := nd.start; p < nd.end; {
			_, e, next := entryAt(nd.buf, p)
			dst = append(dst, nd.buf[p:e]...)
			p = next
		}
	}
	return dst
}

// PushSize is the record size q would have with vals pushed (for the
// limits, checked before a push).
func (q *Quick) PushSize(vals [][]byte) int {
	body := q.body
	for _, v := range vals {
		body += ItemSize(v)
	}
	return Size(q.count+len(vals), body)
}

// Push adds vals at the head (left: each in turn, so the last ends up
// first) or at the tail.
func (q *Quick) Push(vals [][]byte, left bool) {
	for _, v := range vals {
		q.push(v, left)
	}
}

// Pop takes up to k elements off the head (left) or the tail and calls f
// with each, in the order popped; they alias q until its next change.
func (q *Quick) Pop(k int, left bool, f func(item []byte)) {
	for ; k > 0 && q.count > 0; k-- {
		f(q.pop(left))
	}
}

// End is the element at the head (left) or the tail; nil when empty.
func (q *Quick) End(left bool) []byte {
	if q.count == 0 {
		return nil
	}
	if left {
		nd := q.node(0)
		s, e, _ := entryAt(nd.buf, nd.start)
		return nd.buf[s:e]
	}
	nd := q.node(q.n - 1)
	s, e, _ := entryBefore(nd.buf, nd.end)
	return nd.buf[s:e]
}

// Range calls f with the elements of indexes [lo, hi) in order, until f
// returns false (0 <= lo <= hi <= Len).
func (q *Quick) Range(lo, hi int, f func(item []byte) bool) {
	if lo >= hi {
		return
	}
	i, skip := q.find(lo)
	left := hi - lo
	for ; i < q.n; i++ {
		nd := q.node(i)
		for p := nd.start; p < nd.end; {
			s, e, next := entryAt(nd.buf, p)
			p = next
			if skip > 0 {
				skip--
				continue
			}
			if !f(nd.buf[s:e]) {
				return
			}
			if left--; left == 0 {
				return
			}
		}
	}
}

// Index is the element of index i (0 <= i < Len).
func (q *Quick) Index(i int) []byte {
	var it []byte
	q.Range(i, i+1, func(b []byte) bool { it = b; return false })
	return it
}

// Items appends every element to dst, head first; they alias q.
func (q *Quick) Items(dst [][]byte) [][]byte {
	q.Range(0, q.count, func(b []byte) bool { dst = append(dst, b); return true })
	return dst
}

// Replace makes items, in order, q's elements (copied: items may alias
// q).
func (q *Quick) Replace(items [][]byte) {
	var nq Quick
	for _, it := range items {
		nq.push(it, false)
	}
	*q = nq
}

// Trim keeps the elements of indexes [lo, hi) only (0 <= lo <= hi <=
// Len): whole nodes go, and the nodes at the cut lose their ends.
func (q *Quick) Trim(lo, hi int) {
	for drop := q.count - hi; drop > 0; {
		if nd := q.node(q.n - 1); int(nd.count) <= drop {
			drop -= int(nd.count)
			q.dropNode(false)
			continue
		}
		q.pop(false)
		drop--
	}
	for drop := lo; drop > 0; {
		if nd := q.node(0); int(nd.count) <= drop {
			drop -= int(nd.count)
			q.dropNode(true)
			continue
		}
		q.pop(true)
		drop--
	}
}

// find is the node holding element i (< Len) and how many elements of
// that node come before it, walking the nodes' counts from the nearer
// end.
func (q *Quick) find(i int) (nodeIdx, skip int) {
	if i < q.count/2 {
		for j := 0; j < q.n; j++ {
			c := int(q.node(j).count)
			if i < c {
				return j, i
			}
			i -= c
		}
		return q.n, 0
	}
	after := q.count - i // elements from i to the end
	for j := q.n - 1; j >= 0; j-- {
		c := int(q.node(j).count)
		if after <= c {
			return j, c - after
		}
		after -= c
	}
	return 0, i
}

func (q *Quick) node(i int) *node { return &q.ring[(q.head+i)&(len(q.ring)-1)] }

// push adds v at the head or the tail.
func (q *Quick) push(v []byte, left bool) {
	k := entrySize(len(v))
	q.count++
	q.body += ItemSize(v)
	var nd *node
	if q.n > 0 {
		if left {
			nd = q.node(0)
		} else {
			nd = q.node(q.n - 1)
		}
		if int(nd.end-nd.start)+k > NodeBytes {
			nd = nil // full: a new node
		}
	}
	if nd == nil {
		q.addNode(left)
		if left {
			nd = q.node(0)
		} else {
			nd = q.node(q.n - 1)
		}
	}
	if left && int(nd.start) < k || !left && len(nd.buf)-int(nd.end) < k {
		q.grow(nd, k, left)
	}
	if left {
		nd.start -= int32(k)
		putEntry(nd.buf[nd.start:], v)
	} else {
		putEntry(nd.buf[nd.end:], v)
		nd.end += int32(k)
	}
	nd.count++
}

// grow reallocates nd's buffer with room for k more bytes at its head
// (left) or tail: twice its use, within NodeBytes (an element larger
// than that has a node of its own), the free room on the side it grows,
// or split between both sides for a list of one node.
func (q *Quick) grow(nd *node, k int, left bool) {
	used := int(nd.end - nd.start)
	want := used + k
	c := min(max(2*want, 64), max(NodeBytes, want))
	buf := append([]byte(nil), make([]byte, c)...)
	buf = buf[:cap(buf)]
	q.heap += int64(cap(buf) - cap(nd.buf))
	free := len(buf) - used
	s := 0
	switch {
	case q.n == 1 && left:
		s = k + (free-k)/2
	case q.n == 1:
		s = (free - k) / 2
	case left:
		s = free
	}
	copy(buf[s:], nd.buf[nd.start:nd.end])
	nd.buf, nd.start, nd.end = buf, int32(s), int32(s+used)
}

// pop takes the element at the head or the tail (q not empty).
func (q *Quick) pop(left bool) []byte {
	var nd *node
	var s, e int32
	if left {
		nd = q.node(0)
		var next int32
		s, e, next = entryAt(nd.buf, nd.start)
		nd.start = next
	} else {
		nd = q.node(q.n - 1)
		var prev int32
		s, e, prev = entryBefore(nd.buf, nd.end)
		nd.end = prev
	}
	it := nd.buf[s:e]
	nd.count--
	q.count--
	q.body -= ItemSize(it)
	if nd.count == 0 {
		q.dropNode(left)
	}
	return it
}

// addNode adds an empty node at the head or the tail.
func (q *Quick) addNode(left bool) {
	if q.n == len(q.ring) {
		c := max(2*len(q.ring), 1)
		ring := make([]node, c)
		for i := 0; i < q.n; i++ {
			ring[i] = *q.node(i)
		}
		q.heap += int64(value.AllocSize(c*nodeSize) - value.AllocSize(len(q.ring)*nodeSize))
		q.ring, q.head = ring, 0
	}
	i := q.n
	if left {
		q.head = (q.head - 1) & (len(q.ring) - 1)
		i = 0
	}
	q.n++
	*q.node(i) = node{}
}

// dropNode removes the node at the head or the tail, whatever it holds
// (its elements are the caller's to have counted out).
func (q *Quick) dropNode(left bool) {
	i := q.n - 1
	if left {
		i = 0
	}
	nd := q.node(i)
	q.count -= int(nd.count)
	for p := nd.start; p < nd.end; {
		s, e, next := entryAt(nd.buf, p)
		q.body -= ItemSize(nd.buf[s:e])
		p = next
	}
	q.heap -= int64(cap(nd.buf))
	*nd = node{}
	if left {
		q.head = (q.head + 1) & (len(q.ring) - 1)
	}
	q.n--
}

// An entry is an element as the record has it (a uvarint length, its
// bytes) followed by the length of that, backwards: bytes of 7 bits read
// from the end, each but the first written with its high bit set.

// entrySize is the bytes an element of n bytes takes in a node.
func entrySize(n int) int {
	f := value.UvarintLen64(uint64(n)) + n
	return f + value.UvarintLen(f)
}

// putEntry writes v's entry at the start of b.
func putEntry(b []byte, v []byte) {
	h := binary.PutUvarint(b, uint64(len(v)))
	copy(b[h:], v)
	f := h + len(v)
	x := f
	for i := value.UvarintLen(f) - 1; i >= 0; i-- {
		c := byte(x & 0x7f)
		if i != 0 {
			c |= 0x80
		}
		b[f+i] = c
		x >>= 7
	}
}

// entryAt reads the entry at p: its element is b[s:e], the next entry
// starts at next.
func entryAt(b []byte, p int32) (s, e, next int32) {
	l, h := binary.Uvarint(b[p:])
	s = p + int32(h)
	e = s + int32(l)
	return s, e, e + int32(value.UvarintLen(int(e-p)))
}

// entryBefore reads the entry that ends at end: its element is b[s:e],
// and it starts at prev.
func entryBefore(b []byte, end int32) (s, e, prev int32) {
	f, shift := 0, 0
	p := end - 1
	for {
		c := b[p]
		f |= int(c&0x7f) << shift
		if c&0x80 == 0 {
			break
		}
		shift += 7
		p--
	}
	prev = p - int32(f)
	s, e, _ = entryAt(b, prev)
	return s, e, prev
}
