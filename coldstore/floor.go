package coldstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tiercache/tiercache/nvmekv"
)

// The flush floor (tier T14): Flush takes a version below every version written
// after it and above every version written before it. An entry at or below
// the floor is stale (it left the directory with the flush and waits for
// the background purge), and a cold record at or below it reads as absent
// wherever cold is read for a key the directory does not name (adoption,
// T4, T15), in this run and, once recorded in the store, after a restart.

// floorKey is the device key the floor is recorded under. Every device key
// the KV makes is 16 bytes (the key hash) or 15 (a chunk, nvmekv K16), and a device
// key is 1..16 bytes (NVMe KV Command Set 1.0 §3.1.2), so no user key nor
// chunk ever maps to this 8-byte one.
var floorKey = []byte("tcfloor0")

// floorMagic starts the floor record; the floor follows, little endian.
const floorMagic = "TCFLOOR1"

const floorRecordBytes = len(floorMagic) + 8

// loadFloor reads the floor recorded in ns (0: none).
func loadFloor(ctx context.Context, ns nvmekv.Namespace) (uint64, error) {
	buf := make([]byte, floorRecordBytes)
	n, err := ns.Retrieve(ctx, floorKey, buf)
	if errors.Is(err, nvmekv.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the flush floor: %w", err)
	}
	if n != floorRecordBytes || string(buf[:len(floorMagic)]) != floorMagic {
		return 0, fmt.Errorf("%w: the flush floor record (device key %q) is %d bytes, not a %q record",
			ErrBadFloor, floorKey, n, floorMagic)
	}
	return binary.LittleEndian.Uint64(buf[len(floorMagic):]), nil
}

// storeFloor records floor in ns and syncs it.
func storeFloor(ctx context.Context, ns nvmekv.Namespace, floor uint64) error {
	buf := make([]byte, floorRecordBytes)
	copy(buf, floorMagic)
	binary.LittleEndian.PutUint64(buf[len(floorMagic):], floor)
	if err := ns.Store(ctx, floorKey, buf, 0); err != nil {
		return fmt.Errorf("record the flush floor: %w", err)
	}
	if err := ns.Flush(ctx); err != nil {
		return fmt.Errorf("sync the flush floor: %w", err)
	}
	return nil
}

func (c *Store) Floor(ctx context.Context) (uint64, error) { return loadFloor(ctx, c.kv.Namespace()) }

func (c *Store) SetFloor(ctx context.Context, floor uint64) error {
	return storeFloor(ctx, c.kv.Namespace(), floor)
}
