package tier

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("tier: cache closed")
	// ErrInvalidOptions is wrapped by every Options.Validate failure.
	ErrInvalidOptions = errors.New("tier: invalid options")
	// ErrTooLarge is returned by Set for a value larger than Options.MaxValue.
	ErrTooLarge = errors.New("tier: value too large")
	// ErrEmptyKey is returned for a zero-length key.
	ErrEmptyKey = errors.New("tier: empty key")
	// ErrNoSpace is returned by Set when no tier could take the value.
	ErrNoSpace = errors.New("tier: no tier could store the value")
	// ErrColdBehind is returned by a write that waited Flusher.Wait for
	// the flusher to catch up with the cold store (Backpressure mode, T25):
	// nothing was stored.
	ErrColdBehind = errors.New("tier: the cold tier is behind")
	// ErrNoSuchKey is returned by Rename when the source key is absent.
	ErrNoSuchKey = errors.New("tier: no such key")
	// ErrSameKey is returned by Copy when source and destination are one key.
	ErrSameKey = errors.New("tier: source and destination are the same key")
	// ErrSourceUnreadable is returned by Rename and Copy when the source's
	// value cannot be read (a cold device error, counted and logged) while
	// the key keeps its version: nothing is changed.
	ErrSourceUnreadable = errors.New("tier: the source key's value cannot be read (cold device error); nothing was changed")
	// ErrBadFloor: the cold store's flush floor record (T14) is not one;
	// Open refuses the store rather than bring flushed keys back.
	ErrBadFloor = errors.New("tier: bad flush floor record")
	// ErrColdReadOnly is returned, in writethrough mode, by a change of
	// several keys (DEL, MSET, FLUSHALL) once the cold store reported a
	// write error and takes no more writes: nothing was changed.
	ErrColdReadOnly = errors.New("tier: the cold store takes no more writes (a write failed; read-only until restart); nothing was changed")
)

// PartialError is returned, in writethrough mode, by a change of several
// keys (Delete, MSet, Flush) whose cold writes or deletes failed for some
// keys and not for others: Failed keys are unchanged, in memory and in
// cold, and Done keys were changed durably. There is no transaction across
// keys; Err is the first failure.
type PartialError struct {
	Op           string // "DEL", "MSET", "FLUSHALL"
	Done, Failed int
	Err          error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("tier: %s changed %d keys, and %d could not be made durable in cold and are unchanged: %v", e.Op, e.Done, e.Failed, e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }
