package dram

import (
	"errors"
	"fmt"

	"github.com/tiercache/tiercache/numa"
)

// Options configure a Log.
type Options struct {
	// Name names the log in errors and logs ("hot", "warm").
	Name string
	// Bytes is the arena's size; it is rounded down to whole segments.
	Bytes int64
	// SegmentBytes is the segment size, the largest record the log takes.
	SegmentBytes int
	// Arena places the memory (node, policy, fallback, prefault); its Bytes
	// is set from Bytes.
	Arena numa.ArenaOptions
}

// Validate reports every problem at once.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: "+format, append([]any{ErrInvalidOptions, o.Name}, a...)...))
	}
	if o.SegmentBytes < 1 || o.SegmentBytes > 1<<30 {
		bad("SegmentBytes %d is outside [1, 1 GiB]", o.SegmentBytes)
	} else if o.Bytes/int64(o.SegmentBytes) < 2 {
		bad("Bytes %d holds fewer than 2 segments of %d bytes", o.Bytes, o.SegmentBytes)
	}
	return errors.Join(errs...)
}
