package nvmekv

import (
	"context"
	"errors"
	"testing"
)

// limitsOnly is a Namespace that only reports limits (KV checks them
// before any command is sent).
type limitsOnly struct {
	Singles
	lim Limits
}

func (n *limitsOnly) Do(ctx context.Context, ops ...*Op) error {
	return errors.New("limitsOnly: no commands expected")
}
func (n *limitsOnly) Flush(context.Context) error { return nil }
func (n *limitsOnly) Limits() Limits              { return n.lim }
func (n *limitsOnly) Close() error                { return nil }

func TestKVRejects(t *testing.T) {
	ns := &limitsOnly{lim: Limits{MaxKeyLen: 16, MaxValueLen: 256, MaxBatch: 4}}
	ns.Singles.D = ns
	kv, err := NewKV(ns, KVOptions{MaxKeyBytes: 8, MaxValueBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := kv.Put(ctx, make([]byte, 2000), nil, Meta{}); !errors.Is(err, ErrInvalidKeySize) {
		t.Errorf("9-byte key over MaxKeyBytes 8: %v", err)
	}
	if err := kv.Put(ctx, []byte("k"), make([]byte, 2000), Meta{}); !errors.Is(err, ErrInvalidValueSize) {
		t.Errorf("value needing 9 chunks with MaxBatch 4: %v", err)
	}
	if _, _, err := kv.Get(ctx, nil, nil); !errors.Is(err, ErrInvalidKeySize) {
		t.Errorf("empty key: %v", err)
	}
	if _, err := NewKV(&limitsOnly{lim: Limits{MaxKeyLen: 8, MaxValueLen: 4096}}, KVOptions{}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("namespace with 8-byte keys: %v", err)
	}
	if err := (&KVOptions{MaxKeyBytes: 70000, MaxValueBytes: -1, HeaderReadBytes: 3}).Validate(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 3 {
		t.Errorf("Validate should report all three problems: %v", err)
	}
	kv.Close()
	if err := kv.Put(ctx, []byte("k"), nil, Meta{}); !errors.Is(err, ErrClosed) {
		t.Errorf("put after close: %v", err)
	}
}
