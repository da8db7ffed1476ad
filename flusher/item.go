package flusher

// Item is one cold write: a put of Key=Value, or a delete of Key. The flusher
// owns Key and Value from Enqueue on: the caller must not modify them.
type Item struct {
	Key     []byte
	Value   []byte
	Version uint64 // the writer's version, stored with the value
	Expiry  int64  // unix ns, 0 = none; past 2262 as backend.Meta.Expiry encodes it
	Flags   uint32 // the writer's flags, stored with the value
	Delete  bool   // remove Key instead of storing it
	// Sync items (drain, writethrough, deletes) are never dropped and bypass
	// admission: the queue may then hold more than QueueItems.
	Sync bool
	// Err is set by Store.PutMany for this item.
	Err error
	// Ref is the caller's: the flusher never reads it, and hands the item
	// back with it to Current, OnDone and OnDrop.
	Ref any
	// OffHeap says Value lives outside the Go heap (a DRAM record pinned
	// while it is written): it counts in Held, not in HeapHeld.
	OffHeap bool

	class uint8      // Options.ClassOf(Key), with Weights
	enq   int64      // enqueue time, unix ns
	done  chan error // Wait's channel, nil when nobody waits
	kh    uint64     // the key's hash: the in-flight set's key (F3)
}

// release hands it back to the caller through OnRelease once the flusher
// is done with it (no one awaits it).
func (f *Flusher) release(it *Item) {
	if f.o.OnRelease != nil && it.done == nil {
		f.o.OnRelease(it)
	}
}

func (it *Item) size() int64 { return int64(len(it.Key) + len(it.Value)) }

// heapSize is what the item holds on the Go heap: its key, and its value
// unless OffHeap.
func (it *Item) heapSize() int64 {
	if it.OffHeap {
		return int64(len(it.Key))
	}
	return it.size()
}
