package flusher

import "errors"

var (
	// ErrClosed is returned by Enqueue and Wait after Close.
	ErrClosed = errors.New("flusher: closed")
	// ErrInvalidOptions is wrapped by every Options.Validate failure.
	ErrInvalidOptions = errors.New("flusher: invalid options")
	// ErrRejected is returned by Enqueue when flash admission refused an item.
	ErrRejected = errors.New("flusher: rejected by flash admission")
	// ErrDropped is what a waiter gets when its item was dropped or rejected.
	ErrDropped = errors.New("flusher: item dropped")
)
