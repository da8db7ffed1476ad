package logstore

import "errors"

// Sentinel errors (nvmekv/emu exports the same values under its names).
var (
	// ErrBadOptions: the options cannot make a log (a capacity without
	// room for four regions, a device smaller than it).
	ErrBadOptions = errors.New("emu: invalid options")
	// ErrClosed: the log is closed.
	ErrClosed = errors.New("emu: closed")
	// ErrReadOnly: a region write failed (EIO, ENOSPC...); Store and Delete
	// fail until the log is reopened. Durable data stays readable.
	ErrReadOnly = errors.New("emu: namespace is read-only after a failed write")
	// ErrFormat: the device holds a store with another geometry, or
	// something that is not an emulated namespace.
	ErrFormat = errors.New("emu: incompatible on-disk format")
	// errCheckpoint: writing the checkpoint at Close failed (a full
	// filesystem...); the superblock is left dirty, so the next Open scans.
	errCheckpoint = errors.New("logstore: write checkpoint")
)
