package set

import (
	"bytes"
	"slices"
)

// Set is what the set commands read and change a set through. Members
// implements it over a decoded record; a structure that changes in place
// may implement it instead.
type Set interface {
	Len() int
	Has(member []byte) bool
	// Add adds member (which the set may keep: it must stay valid while
	// the set is used) and reports whether it was new.
	Add(member []byte) bool
	// Remove removes member and reports whether it was there.
	Remove(member []byte) bool
	// At is the i-th member (0 ≤ i < Len) in the set's order, for random
	// picks and scans.
	At(i int) []byte
	// Each calls f for every member in the set's order until f returns
	// false.
	Each(f func(member []byte) bool)
	// Size is the encoded record's size; AppendRecord appends the record.
	Size() int
	AppendRecord(dst []byte) []byte
}

// Members is a set as a slice of members in ascending byte order (VS3).
type Members struct {
	m [][]byte
}

var _ Set = (*Members)(nil)

// Load decodes rec (nil: an empty set) into m.
func (m *Members) Load(rec []byte) error {
	if rec == nil {
		m.m = m.m[:0]
		return nil
	}
	return m.Decode(rec)
}

// Reset empties m, keeping its array; Release also drops the references
// it held.
func (m *Members) Reset()   { m.m = m.m[:0] }
func (m *Members) Release() { clear(m.m[:cap(m.m)]); m.m = m.m[:0] }

func (m *Members) Len() int { return len(m.m) }

func (m *Members) find(b []byte) (int, bool) {
	return slices.BinarySearchFunc(m.m, b, bytes.Compare)
}

func (m *Members) Has(b []byte) bool {
	_, ok := m.find(b)
	return ok
}

func (m *Members) Add(b []byte) bool {
	i, ok := m.find(b)
	if ok {
		return false
	}
	m.m = slices.Insert(m.m, i, b)
	return true
}

func (m *Members) Remove(b []byte) bool {
	i, ok := m.find(b)
	if ok {
		m.m = slices.Delete(m.m, i, i+1)
	}
	return ok
}

func (m *Members) At(i int) []byte { return m.m[i] }

func (m *Members) Each(f func([]byte) bool) {
	for _, b := range m.m {
		if !f(b) {
			return
		}
	}
}

// All is the members in ascending order; they alias m.
func (m *Members) All() [][]byte { return m.m }
