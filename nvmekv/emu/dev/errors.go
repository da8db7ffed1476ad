package dev

import "errors"

var (
	// ErrNotNVM: the namespace's command set or LBA format is one this
	// package does not drive (the message names the device and why).
	ErrNotNVM = errors.New("dev: not a usable NVM namespace")
	// ErrNotDevice: the path is not the kind of file the backend needs.
	ErrNotDevice = errors.New("dev: wrong kind of file")
	// ErrUnaligned: a request's offset or length is not a multiple of the
	// device's block; refused before submission.
	ErrUnaligned = errors.New("dev: unaligned request")
	// ErrOutOfRange: a request reaches past the end of the device; refused
	// before submission.
	ErrOutOfRange = errors.New("dev: request out of range")
	// ErrTooLarge: a request is larger than the device's largest transfer.
	ErrTooLarge = errors.New("dev: request larger than the largest transfer")
	// ErrInjected marks an error a Fault device made up.
	ErrInjected = errors.New("dev: injected fault")
)
