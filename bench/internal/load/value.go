package load

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
)

// HeaderBytes is the part of a value that names it: the key's index and
// the version written (8 bytes each, little endian). The rest of the value
// is pseudo-random bytes drawn from those two, so every byte read can be
// checked.
const HeaderBytes = 16

// Key is the name of key i.
func Key(prefix string, i int) string { return fmt.Sprintf("%s%08d", prefix, i) }

// Fill writes the value of key i at version ver into v (len(v) >= HeaderBytes).
func Fill(v []byte, i int, ver uint64) {
	binary.LittleEndian.PutUint64(v[0:], uint64(i))
	binary.LittleEndian.PutUint64(v[8:], ver)
	fillRandom(v[HeaderBytes:], uint64(i)*0x9e3779b97f4a7c15^ver)
}

// fillRandom fills b from splitmix64 seeded with s.
func fillRandom(b []byte, s uint64) {
	var w [8]byte
	for len(b) > 0 {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		binary.LittleEndian.PutUint64(w[:], z)
		b = b[copy(b, w[:]):]
	}
}

// ErrMismatch is a value that is not what was written to its key.
var ErrMismatch = errors.New("value mismatch")

// Check verifies that v is a whole value of key i, of size size, written
// at some version, and returns that version. scratch is reused for the
// expected bytes and returned (grown if needed).
func Check(v []byte, i, size int, scratch []byte) (uint64, []byte, error) {
	if len(v) != size {
		return 0, scratch, fmt.Errorf("%w: key %d: %d bytes, want %d", ErrMismatch, i, len(v), size)
	}
	if got := binary.LittleEndian.Uint64(v); got != uint64(i) {
		return 0, scratch, fmt.Errorf("%w: key %d holds the value of key %d", ErrMismatch, i, got)
	}
	ver := binary.LittleEndian.Uint64(v[8:])
	if cap(scratch) < size {
		scratch = make([]byte, size)
	}
	scratch = scratch[:size]
	Fill(scratch, i, ver)
	for j := HeaderBytes; j < size; j++ {
		if v[j] != scratch[j] {
			return ver, scratch, fmt.Errorf("%w: key %d version %d: byte %d differs", ErrMismatch, i, ver, j)
		}
	}
	return ver, scratch, nil
}

// Versions tracks, per key, the newest version whose SET was acknowledged
// and the newest one issued. Writers of one key are serialised (striped
// locks), so a server applies a key's versions in order and a read that
// starts after version a was acknowledged must see a version in
// [a, issued]: anything older is a stale read, anything newer was never
// written.
type Versions struct {
	acked, issued []atomic.Uint64
	locks         [4096]sync.Mutex
}

// NewVersions tracks n keys, none written yet (version 0).
func NewVersions(n int) *Versions {
	return &Versions{acked: make([]atomic.Uint64, n), issued: make([]atomic.Uint64, n)}
}

// Acked is the newest acknowledged version of key i: read it before the
// read that is checked against it.
func (vs *Versions) Acked(i int) uint64 { return vs.acked[i].Load() }

// Verify checks that version ver, read from key i by a read that began
// when Acked(i) was lo, can be there.
func (vs *Versions) Verify(i int, lo, ver uint64) error {
	if hi := vs.issued[i].Load(); ver < lo || ver > hi {
		return fmt.Errorf("%w: key %d: read version %d, want %d..%d", ErrMismatch, i, ver, lo, hi)
	}
	return nil
}

// Write issues the next version of key i, fills v with it, calls set, and
// marks the version acknowledged when set succeeds. Writers of the same
// key wait for each other.
func (vs *Versions) Write(i int, v []byte, set func() error) error {
	mu := &vs.locks[i%len(vs.locks)]
	mu.Lock()
	defer mu.Unlock()
	ver := vs.issued[i].Add(1)
	Fill(v, i, ver)
	if err := set(); err != nil {
		// The server may or may not hold it: issued stays, so it is
		// accepted if read, and acked stays, so older ones are too.
		return err
	}
	vs.acked[i].Store(ver)
	return nil
}

// WriteBatch issues the next version of each key in keys (all different),
// fills vals[j] with key keys[j]'s, calls set once (one pipelined round
// trip), and marks them acknowledged if it succeeds. It holds the locks of
// all these keys meanwhile (taken in order), so writers of any of them
// wait, as in Write.
func (vs *Versions) WriteBatch(keys []int, vals [][]byte, set func() error) error {
	stripes := make([]int, len(keys))
	for j, i := range keys {
		stripes[j] = i % len(vs.locks)
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		vs.locks[s].Lock()
	}
	defer func() {
		for _, s := range stripes {
			vs.locks[s].Unlock()
		}
	}()
	vers := make([]uint64, len(keys))
	for j, i := range keys {
		vers[j] = vs.issued[i].Add(1)
		Fill(vals[j], i, vers[j])
	}
	if err := set(); err != nil {
		return err
	}
	for j, i := range keys {
		vs.acked[i].Store(vers[j])
	}
	return nil
}

// Save writes the acknowledged and issued versions to path, for a later
// process that reads the same keys (Load).
func (vs *Versions) Save(path string) error {
	b := make([]byte, 0, 16*len(vs.acked))
	for i := range vs.acked {
		b = binary.LittleEndian.AppendUint64(b, vs.acked[i].Load())
		b = binary.LittleEndian.AppendUint64(b, vs.issued[i].Load())
	}
	return os.WriteFile(path, b, 0o600)
}

// LoadVersions reads what Save wrote, for n keys.
func LoadVersions(path string, n int) (*Versions, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 16*n {
		return nil, fmt.Errorf("%s: %d bytes, want %d for %d keys", path, len(b), 16*n, n)
	}
	vs := NewVersions(n)
	for i := 0; i < n; i++ {
		vs.acked[i].Store(binary.LittleEndian.Uint64(b[16*i:]))
		vs.issued[i].Store(binary.LittleEndian.Uint64(b[16*i+8:]))
	}
	return vs, nil
}

// CheckRead checks a value read from key i by a read that began when
// Acked(i) was lo: Check, then Verify. scratch is as for Check.
func (vs *Versions) CheckRead(v []byte, i, size int, lo uint64, scratch []byte) ([]byte, error) {
	ver, scratch, err := Check(v, i, size, scratch)
	if err == nil {
		err = vs.Verify(i, lo, ver)
	}
	return scratch, err
}
