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
)
