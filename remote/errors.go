package remote

import "errors"

var (
	// ErrInvalidConfig is wrapped by every Config.Validate failure.
	ErrInvalidConfig = errors.New("remote: invalid config")
	// ErrUnavailable: the store is unreachable or its breaker is open; the
	// call made no round trip.
	ErrUnavailable = errors.New("remote: unavailable")
	// ErrTooLarge: a value above the tier's MaxValue is not stored.
	ErrTooLarge = errors.New("remote: value larger than the limit")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("remote: closed")
)
