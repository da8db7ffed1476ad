package emu

import "github.com/tiercache/tiercache/nvmekv/emu/logstore"

// Sentinel errors (the log's, under the namespace's names); the KV command
// results themselves use nvmekv's.
var (
	// ErrBadOptions: Options.Validate found a problem, or the capacity
	// and the device cannot make a log.
	ErrBadOptions = logstore.ErrBadOptions
	// ErrClosed: the namespace is closed.
	ErrClosed = logstore.ErrClosed
	// ErrReadOnly: a region write failed (EIO, ENOSPC...); the namespace
	// refuses Store and Delete until it is reopened. Durable data stays readable.
	ErrReadOnly = logstore.ErrReadOnly
	// ErrFormat: the device holds a store with another geometry, or
	// something that is not an emulated namespace.
	ErrFormat = logstore.ErrFormat
)
