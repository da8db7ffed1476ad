package backend

import "context"

// Floors is a store that records the tier's flush floor (tier T14): every
// record of a version at or below it was flushed and reads as absent.
type Floors interface {
	// Floor returns the floor the store recorded (0: none).
	Floor(ctx context.Context) (uint64, error)
	// SetFloor records floor durably (synced before it returns), in a
	// place no user key maps to.
	SetFloor(ctx context.Context, floor uint64) error
}

// Keyspace is what a store may also do so that the directory need not
// remember the keys only it holds (tier T37): count its user keys in O(1),
// walk them in the order of their tags, and say from memory that it does
// not hold a key. The cold store over the emulated namespace does; a KV
// SSD cannot list by tag.
type Keyspace interface {
	// UserKeys is the number of user keys whose record header the store
	// holds, O(1); ok is false when it cannot count them.
	UserKeys() (n int64, ok bool)
	// ScanUserKeys calls fn with the user key and Meta of every record
	// header whose device key's tag t (nvmekv.TagOf of the key's
	// nvmekv.DefaultHasher hash) has from ≤ t < next, about n of them, and
	// returns next (1<<32 once the walk reached the end).
	ScanUserKeys(ctx context.Context, from uint64, n int, fn func(key []byte, m Meta)) (next uint64, err error)
	// MayHold reports false only if the store holds no record of key,
	// known from memory without I/O.
	MayHold(key []byte) bool
	// Clear drops every record the store holds, durably, at a cost that
	// does not grow with the keys: none of them counts, is walked or read
	// after it returns nil, in this run or the next.
	Clear(ctx context.Context) error
}

// Pieces is a store that keeps a large aggregate in pieces cut at its
// items (the cold store, nvmekv K20), so a read of a few items reads a
// few blocks (tier ReadPieces).
type Pieces interface {
	// GetPieces reads key's piece table, then the pieces choose picks
	// from it (their indexes, in the order wanted) in one submission, and
	// returns them in that order with the table and the record's Meta. A
	// record not stored in pieces is read whole and returned as its one
	// piece, with a nil table. found is false on a miss (B1).
	GetPieces(ctx context.Context, key []byte, choose func(t []PieceInfo) []int) (pieces [][]byte, t []PieceInfo, m Meta, found bool, err error)
}

// PieceInfo is one piece of a value stored in pieces: where it is in the
// value, and the meta its writer gave it.
type PieceInfo struct {
	Off, Len int
	Meta     uint32
}

// CutFunc lays out a value of a writer's flags for pieces: the value as
// stored (value itself, or its items in another order), where its pieces
// end and their metas; out nil stores value whole.
type CutFunc func(flags uint32, value []byte) (out []byte, ends []int, metas []uint32)
