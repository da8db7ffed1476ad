package nvmekv

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// Op is one KV command of a batch. Buf is the data buffer: the value for
// Store (value size = len(Buf)), the host buffer for Retrieve and List
// (host buffer size = len(Buf)). The namespace keeps Buf's memory valid for
// the kernel (it is pinned) until the command completes.
type Op struct {
	Code    Opcode
	Key     []byte // device key, 1..16 bytes (List: 0..16, the start key)
	Buf     []byte
	Options uint8 // Store*/Retrieve* option bits (CDW11[15:8])
	// Link makes the next Op of the batch start only if this one succeeds
	// (IOSQE_IO_LINK); the rest of a broken chain fails with ErrCanceled.
	Link bool

	// Results.
	DW0 uint32 // completion DW0: Retrieve = stored value size; List = keys found
	Err error  // nil, a *StatusError, a wrapped errno, or ErrCanceled
}

// Encode builds op's 64-byte command for namespace nsid (the data pointer
// is not set: the caller's transport supplies it).
func (op *Op) Encode(nsid uint32) (Command, error) {
	switch op.Code {
	case OpStore:
		return EncodeStore(nsid, op.Key, uint32(len(op.Buf)), op.Options)
	case OpRetrieve:
		return EncodeRetrieve(nsid, op.Key, uint32(len(op.Buf)), op.Options)
	case OpList:
		return EncodeList(nsid, op.Key, uint32(len(op.Buf)))
	case OpDelete:
		return EncodeDelete(nsid, op.Key)
	case OpExist:
		return EncodeExist(nsid, op.Key)
	case OpFlush:
		return EncodeFlush(nsid), nil
	}
	return Command{}, fmt.Errorf("%w: opcode %#02x is not a KV command", ErrBadOptions, uint8(op.Code))
}

// Complete decodes a completion into op.DW0/op.Err: res is cqe.res (0,
// -errno or the NVMe status field), result is big_cqe[0] (DW0 | DW1<<32).
func (op *Op) Complete(res int32, result uint64) {
	op.DW0 = uint32(result)
	op.Err = DecodeResult(op.Code, res)
}

// DecodeResult turns cqe.res into an error: nil for 0, ErrCanceled for
// -ECANCELED (a broken link chain), a wrapped errno for other negative
// values and a *StatusError for a positive NVMe status.
func DecodeResult(code Opcode, res int32) error {
	switch {
	case res == 0:
		return nil
	case res == -int32(syscall.ECANCELED):
		return fmt.Errorf("%s: %w", code, ErrCanceled)
	case res < 0:
		return fmt.Errorf("nvmekv: %s: %w", code, syscall.Errno(-res))
	}
	return statusFromRes(code, res)
}

// Limits describe a namespace (from Identify for a device).
type Limits struct {
	MaxKeyLen   int    // KVKML, ≤ 16
	MaxValueLen int    // KVVML, bytes per Store
	MaxKeys     uint64 // MNKS, 0 = no maximum indicated
	Capacity    uint64 // NSZE, bytes
	Utilization uint64 // NUSE, bytes
	// MaxBatch is the most Ops one Do call accepts (the submission queue
	// size, as the ring admits it, for passthrough; the emulated namespace
	// takes any batch); 0 = unlimited.
	MaxBatch int
}

// Namespace is a KV namespace: a KV SSD through passthrough, or the
// emulated namespace. Implementations are safe for concurrent use.
type Namespace interface {
	// Do runs ops as one submission, in order; Link chains are kept.
	// Per-op outcomes are in ops[i].DW0/Err. The returned error is about
	// the batch as a whole (closed, ctx, submission failure); when it is
	// non-nil the ops without an outcome have Err set to it.
	Do(ctx context.Context, ops ...*Op) error
	Store(ctx context.Context, key, value []byte, opts uint8) error
	// Retrieve copies the value into buf and returns the stored value
	// size, which may exceed len(buf) (then buf holds a prefix).
	Retrieve(ctx context.Context, key, buf []byte) (int, error)
	Delete(ctx context.Context, key []byte) error
	Exist(ctx context.Context, key []byte) (bool, error)
	// List returns keys ≥ start that fit in a host buffer of bufBytes
	// and the total number of keys found (DW0).
	List(ctx context.Context, start []byte, bufBytes int) ([][]byte, uint32, error)
	// Flush makes every completed Store and Delete durable.
	Flush(ctx context.Context) error
	Limits() Limits
	Close() error
}

// Doer is the batch primitive the single-command helpers are built on.
type Doer interface {
	Do(ctx context.Context, ops ...*Op) error
}

// Singles implements the single-command methods of Namespace on top of Do;
// implementations embed it and set D to themselves.
type Singles struct{ D Doer }

func (s Singles) one(ctx context.Context, op *Op) error {
	if err := s.D.Do(ctx, op); err != nil {
		return err
	}
	return op.Err
}

// Store stores value under key with Store options opts.
func (s Singles) Store(ctx context.Context, key, value []byte, opts uint8) error {
	return s.one(ctx, &Op{Code: OpStore, Key: key, Buf: value, Options: opts})
}

// Retrieve reads key's value into buf and returns the stored size.
func (s Singles) Retrieve(ctx context.Context, key, buf []byte) (int, error) {
	op := &Op{Code: OpRetrieve, Key: key, Buf: buf}
	err := s.one(ctx, op)
	return int(op.DW0), err
}

// Delete removes key.
func (s Singles) Delete(ctx context.Context, key []byte) error {
	return s.one(ctx, &Op{Code: OpDelete, Key: key})
}

// Exist reports whether key exists (status 0x87 means no).
func (s Singles) Exist(ctx context.Context, key []byte) (bool, error) {
	err := s.one(ctx, &Op{Code: OpExist, Key: key})
	if err == nil {
		return true, nil
	}
	if isNotFound(err) {
		return false, nil
	}
	return false, err
}

// List lists keys from start.
func (s Singles) List(ctx context.Context, start []byte, bufBytes int) ([][]byte, uint32, error) {
	op := &Op{Code: OpList, Key: start, Buf: make([]byte, bufBytes)}
	if err := s.one(ctx, op); err != nil {
		return nil, op.DW0, err
	}
	keys, err := ParseList(op.Buf)
	return keys, op.DW0, err
}

func isNotFound(err error) bool { return errors.Is(err, ErrKeyNotFound) }
