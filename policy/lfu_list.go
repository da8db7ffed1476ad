package policy

// Queue names the LFU queue a Node is in.
type Queue uint8

// The queues of a W-TinyLFU (Einziger, Friedman, Manes: "TinyLFU: A Highly
// Efficient Cache Admission Policy", ACM TOS 2017, §4.2): new items enter
// the window; the main space is a segmented LRU of probation and
// protected.
const (
	NotResident Queue = iota
	Window
	Probation
	Protected
)

func (q Queue) String() string {
	switch q {
	case Window:
		return "window"
	case Probation:
		return "probation"
	case Protected:
		return "protected"
	}
	return "none"
}

// Node is one resident item's place in an LFU. The owner embeds it in its
// own record of the item and keeps it while the item is resident; every
// method of LFU that takes a Node must be called with the owner's lock of
// the LFU held. The zero Node is not resident.
type Node struct {
	prev, next *Node
	hash       uint64 // the key's hash, the sketch's input
	weight     uint32 // what the item is charged (bytes)
	queue      Queue
	// saturated: the sketch's estimate of hash reached its maximum in the
	// sketch's epoch satEpoch, so an access until the next reset changes
	// nothing there (conservative update raises no counter at the
	// maximum) and skips the sketch and its cache miss.
	saturated bool
	satEpoch  uint16
}

// Queue is the queue n is in (NotResident once evicted or removed).
func (n *Node) Queue() Queue { return n.queue }

// Resident reports whether n is in one of the LFU's queues.
func (n *Node) Resident() bool { return n.queue != NotResident }

// Hash is the key hash n was given (SetHash, or its first Add); it never
// changes for a node once set, so its owner may read it without the LFU's
// lock.
func (n *Node) Hash() uint64 { return n.hash }

// SetHash gives a node that was never added its key's hash, before anyone
// else can see the node (Add then keeps it).
func (n *Node) SetHash(h uint64) { n.hash = h }

// Weight is what n was added with.
func (n *Node) Weight() uint32 { return n.weight }

// lruList is an intrusive doubly linked list of Nodes, least recently used
// at the head.
type lruList struct {
	head, tail *Node
	weight     int64
	len        int
}

func (l *lruList) pushBack(n *Node) {
	n.prev, n.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = n
	} else {
		l.head = n
	}
	l.tail = n
	l.weight += int64(n.weight)
	l.len++
}

func (l *lruList) remove(n *Node) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		l.tail = n.prev
	}
	n.prev, n.next = nil, nil
	l.weight -= int64(n.weight)
	l.len--
}

func (l *lruList) moveToBack(n *Node) {
	if l.tail == n {
		return
	}
	l.remove(n)
	l.pushBack(n)
}
