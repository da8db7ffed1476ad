package set

import (
	"bytes"
	"slices"
	"unsafe"

	"github.com/tiercache/tiercache/value"
)

// Live is a set as the DRAM tiers keep it live (tier.Live), changed in
// place: a value.Table of its members (with empty values), so a member
// is added, removed or found with a probe or two. Its order is the one
// its members were added in (Redis's hashtable order is no order
// either); its record, which lists the members in ascending byte order,
// is built only when asked for (AppendRecord sorts them). A Live is not
// safe for concurrent use; concurrent readers are fine.
type Live struct {
	t value.Table
}

var liveBytes = int64(value.AllocSize(int(unsafe.Sizeof(Live{}))))

// NewLive returns an empty set.
func NewLive() *Live { return &Live{} }

// LoadLive makes a Live of a record; it copies what it keeps.
func LoadLive(rec []byte) (*Live, error) {
	var m Members
	if err := m.Decode(rec); err != nil {
		return nil, err
	}
	l := &Live{}
	for _, b := range m.m {
		l.t.Put(b, nil)
	}
	return l, nil
}

// Len is the number of members.
func (l *Live) Len() int { return l.t.Len() }

// Has reports whether b is a member.
func (l *Live) Has(b []byte) bool { return l.t.Has(b) }

// Add adds b (copied) and reports whether it was new.
func (l *Live) Add(b []byte) bool { return l.t.Put(b, nil) }

// Remove removes b and reports whether it was a member.
func (l *Live) Remove(b []byte) bool { return l.t.Delete(b) }

// Each calls f with every member, in l's order, until f returns false;
// they alias l until its next change.
func (l *Live) Each(f func(member []byte) bool) {
	l.t.Each(func(k, _ []byte) bool { return f(k) })
}

// Random is a member picked uniformly at random (l not empty), aliasing l.
func (l *Live) Random() []byte {
	k, _ := l.t.Random()
	return k
}

// Size is the size of l's record: each member is one byte shorter there
// than in the table's body, which has its empty value's length too.
func (l *Live) Size() int {
	return 1 + value.UvarintLen64(uint64(l.t.Len())) + l.t.BodySize() - l.t.Len()
}

// RecordSize is Size (tier.Live).
func (l *Live) RecordSize() int { return l.Size() }

// AppendRecord appends l's record, its members sorted, to dst.
func (l *Live) AppendRecord(dst []byte) []byte {
	m := Members{m: make([][]byte, 0, l.Len())}
	l.Each(func(b []byte) bool {
		m.m = append(m.m, b)
		return true
	})
	slices.SortFunc(m.m, bytes.Compare)
	return m.AppendRecord(dst)
}

// HeapBytes is the heap l takes (value.AllocSize of its allocations).
func (l *Live) HeapBytes() int64 { return liveBytes + l.t.HeldBytes() }
