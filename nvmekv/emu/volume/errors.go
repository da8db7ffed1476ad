package volume

import "errors"

var (
	// ErrFormat: the table is damaged, or the path holds something that is
	// not a volume.
	ErrFormat = errors.New("volume: not a volume")
	// ErrCapacity: a namespace asked for more than the unallocated
	// capacity (the largest free run).
	ErrCapacity = errors.New("volume: not enough unallocated capacity")
	// ErrExists: a namespace of that name exists already.
	ErrExists = errors.New("volume: namespace exists")
	// ErrNotFound: no namespace of that name.
	ErrNotFound = errors.New("volume: namespace not found")
	// ErrBusy: another process has the volume open.
	ErrBusy = errors.New("volume: in use by another process")
	// ErrBadName: a namespace name that cannot be recorded.
	ErrBadName = errors.New("volume: bad namespace name")
	// ErrShrink: the volume was asked to be smaller than it is.
	ErrShrink = errors.New("volume: a volume does not shrink")
)
