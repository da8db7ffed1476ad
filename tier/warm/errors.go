package warm

import "errors"

// Sentinel errors; callers match them with errors.Is.
var (
	// ErrTooLarge: the record (header, key, value) does not fit one segment,
	// or the key is longer than MaxKeyLen.
	ErrTooLarge = errors.New("warm: item too large")
	// ErrClosed: the cache was closed.
	ErrClosed = errors.New("warm: cache closed")
	// ErrInvalidOptions: Options.Validate found a problem.
	ErrInvalidOptions = errors.New("warm: invalid options")
)
