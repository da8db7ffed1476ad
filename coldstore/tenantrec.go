package coldstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tiercache/tiercache/nvmekv"
)

// The tenant record: a tenant namespace says whose it is and which keys
// it holds, under an 8-byte device key no user key or chunk maps to (as
// the flush floor's, floor.go), so that a restart, a claim or a kept
// namespace of a tenant no longer configured routes exactly the keys it
// holds (CS5, CS8), and an interrupted move of its keys out of the
// default namespace is seen (CS7).
var tenantKey = []byte("tctenant")

const tenantMagic = "TCTENNT1"

// tenantRec is a tenant namespace's record: 8 magic, u8 moved, u8 name
// length, name, u16 prefix length, prefix.
type tenantRec struct {
	Name, Prefix string
	// Moved: the keys of Prefix the default namespace held when this
	// namespace was made were moved here (CS7).
	Moved bool
}

func (r tenantRec) encode() []byte {
	b := make([]byte, 0, len(tenantMagic)+4+len(r.Name)+len(r.Prefix))
	b = append(b, tenantMagic...)
	moved := byte(0)
	if r.Moved {
		moved = 1
	}
	b = append(b, moved, byte(len(r.Name)))
	b = append(b, r.Name...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(r.Prefix)))
	return append(b, r.Prefix...)
}

func parseTenantRec(b []byte) (tenantRec, error) {
	var r tenantRec
	h := len(tenantMagic)
	if len(b) < h+2 || string(b[:h]) != tenantMagic {
		return r, fmt.Errorf("%w: the tenant record (device key %q) is not a %q record", ErrBadTenantRecord, tenantKey, tenantMagic)
	}
	r.Moved = b[h] == 1
	n := int(b[h+1])
	if len(b) < h+2+n+2 {
		return r, fmt.Errorf("%w: the tenant record is cut short", ErrBadTenantRecord)
	}
	r.Name = string(b[h+2 : h+2+n])
	p := h + 2 + n
	m := int(binary.LittleEndian.Uint16(b[p:]))
	if len(b) != p+2+m {
		return r, fmt.Errorf("%w: the tenant record's prefix is %d bytes, %d follow", ErrBadTenantRecord, m, len(b)-p-2)
	}
	r.Prefix = string(b[p+2:])
	return r, nil
}

// maxTenantRec is the largest record: a name of 255 bytes, a prefix of
// at most maxPrefix.
const (
	maxPrefix    = 1024
	maxTenantRec = len(tenantMagic) + 2 + 255 + 2 + maxPrefix
)

// loadTenantRec reads ns's tenant record; found is false when it has none.
func loadTenantRec(ctx context.Context, ns nvmekv.Namespace) (r tenantRec, found bool, err error) {
	buf := make([]byte, maxTenantRec)
	n, err := ns.Retrieve(ctx, tenantKey, buf)
	if errors.Is(err, nvmekv.ErrKeyNotFound) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read the tenant record: %w", err)
	}
	if n > len(buf) {
		return r, false, fmt.Errorf("%w: the tenant record is %d bytes", ErrBadTenantRecord, n)
	}
	r, err = parseTenantRec(buf[:n])
	return r, err == nil, err
}

// storeTenantRec writes r to ns and syncs it.
func storeTenantRec(ctx context.Context, ns nvmekv.Namespace, r tenantRec) error {
	if err := ns.Store(ctx, tenantKey, r.encode(), 0); err != nil {
		return fmt.Errorf("record the tenant: %w", err)
	}
	if err := ns.Flush(ctx); err != nil {
		return fmt.Errorf("sync the tenant record: %w", err)
	}
	return nil
}
