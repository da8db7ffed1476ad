package emu

import "errors"

// Sentinel errors; the KV command results themselves use nvmekv's.
var (
	// ErrBadOptions: Options.Validate found a problem.
	ErrBadOptions = errors.New("emu: invalid options")
	// ErrClosed: the namespace is closed.
	ErrClosed = errors.New("emu: closed")
	// ErrReadOnly: a region write failed (EIO, ENOSPC...); the namespace
	// refuses Store and Delete until it is reopened. Durable data stays readable.
	ErrReadOnly = errors.New("emu: namespace is read-only after a failed write")
	// ErrFormat: the device holds a store with another geometry, or
	// something that is not an emulated namespace.
	ErrFormat = errors.New("emu: incompatible on-disk format")
	// errCheckpoint: writing the checkpoint at Close failed (a full
	// filesystem...); the superblock is left dirty, so the next Open scans.
	errCheckpoint = errors.New("emu: write checkpoint")
)
