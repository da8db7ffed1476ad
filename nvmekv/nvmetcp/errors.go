package nvmetcp

import "errors"

var (
	// ErrProtocol: the target broke the NVMe/TCP protocol.
	ErrProtocol = errors.New("nvmetcp: NVMe/TCP protocol error")
	// ErrTerminated: the target ended the connection with a C2HTermReq.
	ErrTerminated = errors.New("nvmetcp: the target terminated the connection")
	// ErrAuth: DH-HMAC-CHAP authentication failed or was refused.
	ErrAuth = errors.New("nvmetcp: authentication failed")
	// ErrBadOptions: HostOptions.Validate found a problem.
	ErrBadOptions = errors.New("nvmetcp: invalid options")
)
