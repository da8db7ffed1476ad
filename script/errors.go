package script

import "errors"

// Sentinel errors; callers match them with errors.Is.
var (
	// ErrCompile wraps a script that does not compile (Load's error
	// carries Redis's reply text).
	ErrCompile = errors.New("script: compile")
	// ErrShebang wraps a #! line Redis 7.0 would refuse.
	ErrShebang = errors.New("script: shebang")
)

// ReplyError is an error whose text is the RESP error line a client gets
// (without the leading '-'), as redis-server words it.
type ReplyError struct {
	Msg string
	Err error // ErrCompile or ErrShebang
}

func (e *ReplyError) Error() string { return e.Msg }
func (e *ReplyError) Unwrap() error { return e.Err }
