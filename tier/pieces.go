package tier

import (
	"context"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/policy"
)

// ReadPieces reads pieces of key's aggregate of kind lk where the cold
// tier alone holds it (T48): choose picks them from the piece table of
// its record there (backend.Pieces), and f gets them in the order chosen
// with the table, or, for a record not stored in pieces, its whole value
// as its one piece and a nil table. done is false, f not called, for any
// other key: absent or expired, of another kind, with a copy in a memory
// tier or in transit, suspect (T42), in a store that reads no pieces, or
// read often enough that the promotion policy wants it in DRAM (the reads
// before this one decide); the caller then reads it whole (Read), which
// admits it as any cold read does. A device error or a record that
// changed meanwhile is done false too (Read reads again, and counts the
// error). f must not call the cache.
func (c *Cache) ReadPieces(key []byte, lk LiveKind, choose func(t []backend.PieceInfo) []int, f func(pieces [][]byte, t []backend.PieceInfo) error) (done bool, err error) {
	ps, ok := c.cold.(backend.Pieces)
	if !ok || len(key) == 0 {
		return false, nil
	}
	if !c.enter() {
		return false, ErrClosed
	}
	defer c.exit()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.RLock()
	e := sh.m[viewString(key)]
	ok = e != nil && e.live(c.now()) && e.kind == lk.Kind() && e.loc == 0 && e.coldHas(e.ver) &&
		(c.rt == nil || !c.rt.suspect(e))
	var ver uint64
	var size int
	if ok {
		ver, size = e.ver, int(e.valueSize())
		_, _, inTransit := c.tr.get(nil, key, ver)
		ok = !inTransit
	}
	sh.mu.RUnlock()
	if !ok || c.pro.Promote(lo, size, policy.Cold) != policy.None {
		return false, nil
	}
	c.pro.Record(lo)
	pieces, t, m, found, err := ps.GetPieces(context.Background(), key, choose)
	if err != nil {
		c.coldError("get pieces", err)
		return false, nil
	}
	if !found || m.Version != ver {
		return false, nil
	}
	c.count(key, policy.Cold, true)
	return true, f(pieces, t)
}
