package hll

import "errors"

// ErrNotHLL: the string is not a HyperLogLog as Redis recognises one
// (isHLLObjectOrReply: shorter than the header, not "HYLL", an unknown
// encoding, or a dense string of the wrong length). The server answers
// it with Redis's "WRONGTYPE Key is not a valid HyperLogLog string value."
var ErrNotHLL = errors.New("hll: not a HyperLogLog string")

// ErrCorrupt: a sparse HyperLogLog whose opcodes do not cover exactly
// the 16384 registers (or run past them). The server answers it with
// Redis's "INVALIDOBJ Corrupted HLL object detected".
var ErrCorrupt = errors.New("hll: corrupted HyperLogLog")
