package tier

import "errors"

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
	// ErrNoSuchKey is returned by Rename when the source key is absent.
	ErrNoSuchKey = errors.New("tier: no such key")
	// ErrSameKey is returned by Copy when source and destination are one key.
	ErrSameKey = errors.New("tier: source and destination are the same key")
	// ErrSourceUnreadable is returned by Rename and Copy when the source's
	// value cannot be read (a cold device error, counted and logged) while
	// the key keeps its version: nothing is changed.
	ErrSourceUnreadable = errors.New("tier: the source key's value cannot be read (cold device error); nothing was changed")
)
