package dhchap

import "errors"

var (
	// ErrBadSecret: a secret is not a valid DHHC-1 representation.
	ErrBadSecret = errors.New("dhchap: invalid DH-HMAC-CHAP secret")
	// ErrUnsupported: a hash, DH group or option neither side shares.
	ErrUnsupported = errors.New("dhchap: unsupported")
	// ErrBadMessage: a protocol message is malformed or out of sequence.
	ErrBadMessage = errors.New("dhchap: invalid protocol message")
	// ErrRefused: the peer refused the authentication (a wrong key, or
	// nothing acceptable offered).
	ErrRefused = errors.New("dhchap: authentication refused")
	// ErrControllerAuth: the controller failed to prove it knows the
	// controller secret.
	ErrControllerAuth = errors.New("dhchap: controller authentication failed")
)
