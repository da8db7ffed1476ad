package dram

import "errors"

var (
	// ErrInvalidOptions is wrapped by every Options.Validate failure.
	ErrInvalidOptions = errors.New("dram: invalid options")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("dram: log closed")
)
