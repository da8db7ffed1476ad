package tcptarget

import "errors"

var (
	// ErrClosed: the target is closed.
	ErrClosed = errors.New("tcptarget: closed")
	// ErrBadOptions: Options.Validate found a problem.
	ErrBadOptions = errors.New("tcptarget: invalid options")
	// ErrProtocol: a host broke the NVMe/TCP protocol; the target answered
	// with a C2HTermReq and closed that connection.
	ErrProtocol = errors.New("tcptarget: NVMe/TCP protocol error")
	// ErrState: the namespace table file is unreadable or does not fit
	// the options; the target does not start and changes nothing.
	ErrState = errors.New("tcptarget: namespace table")
	// ErrInsecure: a listener on a non-loopback address without
	// authentication required of every host.
	ErrInsecure = errors.New("tcptarget: refusing an unauthenticated listener")
)
