package nvmekv

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// KVOptions configure a KV. The zero value works (EnsureDefaults).
type KVOptions struct {
	// MaxKeyBytes is the largest user key, bytes; default 1024, at most 65535.
	MaxKeyBytes int
	// MaxValueBytes is the largest user value, bytes; default 64 MiB.
	MaxValueBytes int64
	// HeaderReadBytes is the host buffer of a Get's first Retrieve when the
	// caller does not give the value's size (GetSized), bytes; default
	// 16 KiB. A larger stored record is read again at its size: a second
	// device round trip. The device (and the emulated namespace) transfers
	// only the record's bytes, so a larger buffer costs memory, not I/O; 16
	// KiB holds the record of a 4 or 8 KiB embedding with its key and header.
	HeaderReadBytes int
	// Hash maps user keys to device keys; default DefaultHasher (XXH3-128).
	Hash Hasher
	// Clock returns unix nanoseconds; records with 0 < expiry ≤ Clock() read
	// as misses. Default time.Now().UnixNano.
	Clock func() int64
	// KeepExpired returns records whatever their expiry (Meta.Expiry says
	// it): for a caller that keeps each key's expiry itself and may have
	// moved it since the record was written. Clock is then unused.
	KeepExpired bool
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// EnsureDefaults fills zero fields with their defaults.
func (o *KVOptions) EnsureDefaults() {
	if o.MaxKeyBytes == 0 {
		o.MaxKeyBytes = 1024
	}
	if o.MaxValueBytes == 0 {
		o.MaxValueBytes = 64 << 20
	}
	if o.HeaderReadBytes == 0 {
		o.HeaderReadBytes = 16 << 10
	}
	if o.Hash == nil {
		o.Hash = DefaultHasher
	}
	if o.Clock == nil {
		o.Clock = func() int64 { return time.Now().UnixNano() }
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// Validate reports every problem at once.
func (o *KVOptions) Validate() error {
	var errs []error
	if o.MaxKeyBytes < 1 || o.MaxKeyBytes > maxUserKeyLen {
		errs = append(errs, fmt.Errorf("%w: MaxKeyBytes %d is outside 1..%d", ErrBadOptions, o.MaxKeyBytes, maxUserKeyLen))
	}
	if o.MaxValueBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: MaxValueBytes %d is negative", ErrBadOptions, o.MaxValueBytes))
	}
	if o.HeaderReadBytes < HeaderBytes+1 {
		errs = append(errs, fmt.Errorf("%w: HeaderReadBytes %d is smaller than a record header (%d)", ErrBadOptions, o.HeaderReadBytes, HeaderBytes+1))
	}
	return errors.Join(errs...)
}
