package server

import (
	"errors"

	"github.com/tiercache/tiercache/resp"
)

// Sentinel errors; callers match them with errors.Is.
var (
	// ErrClosed is returned by Serve and Listen after Close.
	ErrClosed = errors.New("server: closed")
	// ErrSocketInUse means the Unix socket path is held by a live server.
	ErrSocketInUse = errors.New("server: socket in use by a live server")
	// ErrNotSocket means the socket path exists and is not a socket, so it is left alone.
	ErrNotSocket = errors.New("server: path exists and is not a socket")
	// ErrNotLoading is returned by Loaded on a server that has its cache.
	ErrNotLoading = errors.New("server: not loading (Loaded called twice, or on a server made by New)")
	// ErrInvalidOptions wraps every problem Options.Validate finds.
	ErrInvalidOptions = errors.New("server: invalid options")
)

// isProtocolError reports whether err is a violation of RESP
// (resp.ProtocolError): the server answers "ERR Protocol error: <what>"
// and closes the connection (S2).
func isProtocolError(err error) bool {
	_, ok := errors.AsType[*resp.ProtocolError](err)
	return ok
}
