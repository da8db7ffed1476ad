package main

import "errors"

// Sentinel errors of the sidecar's start.
var (
	// errActivation: the sockets or the environment systemd passed
	// (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES) cannot be served.
	errActivation = errors.New("socket activation")
	// errNotify: NOTIFY_SOCKET names no socket tiercache can send to.
	errNotify = errors.New("sd_notify")
	// errMetricsInUse: metrics.listen's address is taken.
	errMetricsInUse = errors.New("the address is in use")
)
