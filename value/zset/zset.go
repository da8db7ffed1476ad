package zset

import (
	"bytes"
	"cmp"
	"slices"
)

// Entry is a member and its score.
type Entry struct {
	Member []byte
	Score  float64
}

// Compare orders entries as Redis does: by score, then by member bytes.
func Compare(a, b Entry) int {
	if c := cmp.Compare(a.Score, b.Score); c != 0 {
		return c
	}
	return bytes.Compare(a.Member, b.Member)
}

// ZSet is what the sorted-set commands read and change a sorted set
// through. Entries implements it over a decoded record; a structure that
// changes in place may implement it instead.
type ZSet interface {
	Reader
	// Rank is member's 0-based rank in ascending order.
	Rank(member []byte) (int, bool)
	// Put sets member's score, adding it (the set may keep member: it must
	// stay valid while the set is used); it reports whether it was new.
	Put(member []byte, score float64) bool
	// Remove removes member and reports whether it was there.
	Remove(member []byte) bool
	// Size is the encoded record's size; AppendRecord appends the record.
	Size() int
	AppendRecord(dst []byte) []byte
}

// Reader is what the algebra (Combine) reads of a sorted set, or of a
// plain set as one whose scores are all 1 (FromSet).
type Reader interface {
	Len() int
	// Score is member's score.
	Score(member []byte) (float64, bool)
	// At is the entry of rank i (0 ≤ i < Len) in ascending order.
	At(i int) Entry
}

// Entries is a sorted set as a slice of entries in Redis's order (VZ3).
type Entries struct {
	e []Entry
}

var _ ZSet = (*Entries)(nil)

// Load decodes rec (nil: an empty sorted set) into z.
func (z *Entries) Load(rec []byte) error {
	if rec == nil {
		z.e = z.e[:0]
		return nil
	}
	return z.Decode(rec)
}

// Reset empties z, keeping its array; Release also drops the references
// it held.
func (z *Entries) Reset()   { z.e = z.e[:0] }
func (z *Entries) Release() { clear(z.e[:cap(z.e)]); z.e = z.e[:0] }

func (z *Entries) Len() int { return len(z.e) }

func (z *Entries) index(m []byte) int {
	for i := range z.e {
		if string(z.e[i].Member) == string(m) {
			return i
		}
	}
	return -1
}

func (z *Entries) Score(m []byte) (float64, bool) {
	if i := z.index(m); i >= 0 {
		return z.e[i].Score, true
	}
	return 0, false
}

func (z *Entries) Rank(m []byte) (int, bool) {
	i := z.index(m)
	return i, i >= 0
}

func (z *Entries) Put(m []byte, score float64) bool {
	i := z.index(m)
	if i >= 0 {
		if z.e[i].Score == score { // -0 and 0 are one score: the stored one stays, as in Redis
			return false
		}
		m = z.e[i].Member
		z.e = slices.Delete(z.e, i, i+1)
	}
	e := Entry{m, score}
	j, _ := slices.BinarySearchFunc(z.e, e, Compare)
	z.e = slices.Insert(z.e, j, e)
	if score == 0 && z.Small() {
		z.e[j].Score = 0 // -0 is stored as 0 in a small sorted set, as in Redis's listpack
	}
	return i < 0
}

// SmallMembers and SmallMember are the bounds within which redis-server
// 7.0 keeps a sorted set as a listpack (zset-max-listpack-entries and
// -value): the form that stores a score of -0 as 0 and that ZSCAN answers
// whole.
const (
	SmallMembers = 128
	SmallMember  = 64
)

// Small reports whether z is within SmallMembers and SmallMember.
func (z *Entries) Small() bool {
	if len(z.e) > SmallMembers {
		return false
	}
	for _, e := range z.e {
		if len(e.Member) > SmallMember {
			return false
		}
	}
	return true
}

// NormalizeZeros stores each score of -0 as 0 when z is small (Put).
func (z *Entries) NormalizeZeros() {
	if !z.Small() {
		return
	}
	for i := range z.e {
		if z.e[i].Score == 0 {
			z.e[i].Score = 0
		}
	}
}

func (z *Entries) Remove(m []byte) bool {
	i := z.index(m)
	if i >= 0 {
		z.e = slices.Delete(z.e, i, i+1)
	}
	return i >= 0
}

func (z *Entries) At(i int) Entry { return z.e[i] }

// All is the entries in ascending order; they alias z.
func (z *Entries) All() []Entry { return z.e }

// FromSorted makes an Entries of entries already in Redis's order.
func FromSorted(e []Entry) *Entries { return &Entries{e: e} }

// RemoveRanks removes the entries of ranks [lo, hi).
func (z *Entries) RemoveRanks(lo, hi int) { z.e = slices.Delete(z.e, lo, hi) }
