package remote

import (
	"context"
	"hash/crc32"
	"time"

	"github.com/redis/rueidis"
	"github.com/tiercache/tiercache/backend"
)

// Get appends key's value to dst (size is ignored: a record says its
// length).
func (s *Store) Get(ctx context.Context, dst, key []byte, _ int) ([]byte, backend.Meta, bool, error) {
	r := s.GetMany(ctx, [][]byte{key}, nil, [][]byte{dst})[0]
	if !r.Found {
		return dst, backend.Meta{}, false, r.Err
	}
	return r.Value, r.Meta, true, nil
}

// GetMany reads keys in one round trip to each node they live on (keys of
// one slot in one MGET, each key's PEXPIRETIME beside them), and chunked
// values' pieces in a second (bounded as a write of their bytes); a key
// whose round trip failed or timed out is a miss with its error (R1, R2).
func (s *Store) GetMany(ctx context.Context, keys [][]byte, _ []int, dsts [][]byte) []backend.Result {
	out := make([]backend.Result, len(keys))
	c := s.conn()
	if c == nil {
		for i := range out {
			out[i].Err = ErrUnavailable
		}
		return out
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	gen := s.gen.Load()
	// Group by slot: one MGET a slot, one pipeline a node (DoMulti).
	slots := make(map[uint16][]int, len(keys))
	var order []uint16
	dk := make([]string, len(keys))
	for i, k := range keys {
		dk[i] = s.dataKey(gen, k)
		sl := KeySlot([]byte(dk[i]))
		if _, ok := slots[sl]; !ok {
			order = append(order, sl)
		}
		slots[sl] = append(slots[sl], i)
	}
	cmds := make(rueidis.Commands, len(order), len(order)+len(keys))
	for j, sl := range order {
		idx := slots[sl]
		if len(idx) == 1 {
			cmds[j] = c.B().Get().Key(dk[idx[0]]).Build()
			continue
		}
		ks := make([]string, len(idx))
		for n, i := range idx {
			ks[n] = dk[i]
		}
		cmds[j] = c.B().Mget().Key(ks...).Build()
	}
	// The expiry is the key's own (PXAT): asked in the same pipelines.
	for i := range keys {
		cmds = append(cmds, c.B().Pexpiretime().Key(dk[i]).Build())
	}
	res := c.DoMulti(ctx, cmds...)
	exps := res[len(order):]
	now := time.Now().UnixNano()
	var chunked []pending
	var firstErr error
	for j, sl := range order {
		idx := slots[sl]
		var vals []rueidis.RedisMessage
		var err error
		if len(idx) == 1 {
			var m rueidis.RedisMessage
			if m, err = res[j].ToMessage(); rueidis.IsRedisNil(err) {
				continue
			}
			if wrongType(err) {
				s.st.foreign.Add(1) // another type of value under our key: not ours (MGET answers nil for it)
				continue
			}
			vals = []rueidis.RedisMessage{m}
		} else {
			vals, err = res[j].ToArray()
		}
		if err != nil && !rueidis.IsRedisNil(err) {
			firstErr = cmp(firstErr, err)
			for _, i := range idx {
				out[i].Err = err
			}
			continue
		}
		for n, i := range idx {
			if n >= len(vals) || vals[n].IsNil() {
				continue
			}
			b, err := vals[n].AsBytes()
			if err != nil {
				s.st.foreign.Add(1)
				continue
			}
			s.st.bytesRead.Add(uint64(len(b)))
			h, ok := decodeHeader(b)
			if !ok || h.length > uint64(s.maxValue) {
				s.st.foreign.Add(1)
				continue
			}
			ms, err := exps[i].AsInt64()
			if err != nil {
				out[i].Err = err
				firstErr = cmp(firstErr, err)
				continue
			}
			var exp int64
			switch {
			case ms == -2: // gone between the two replies: replaced or expired just now
				continue
			case ms > 0:
				if exp = backend.ExpiryFromMillis(ms); backend.Expired(exp, now) {
					continue
				}
			}
			m := backend.Meta{Expiry: exp, Flags: h.flags}
			if h.chunked {
				chunked = append(chunked, pending{i: i, h: h, m: m})
				continue
			}
			v := b[HeaderBytes:]
			if crc32.Checksum(v, castagnoli) != h.crc {
				s.st.foreign.Add(1)
				continue
			}
			out[i] = backend.Result{Value: appendTo(dsts, i, v), Meta: m, Found: true}
		}
	}
	if len(chunked) > 0 {
		// The pieces have the time their write had (R1).
		n := 0
		for _, p := range chunked {
			n += int(p.h.length)
		}
		pctx, cancel := context.WithTimeout(parent, s.bulkTimeout(n))
		firstErr = cmp(firstErr, s.readPieces(pctx, c, gen, chunked, dsts, out))
		cancel()
	}
	s.outcome(start, firstErr)
	return out
}

// pending is a chunked value whose pieces are still to be read.
type pending struct {
	i int
	h header
	m backend.Meta
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// appendTo appends v to dsts[i] (fresh memory when dsts is nil).
func appendTo(dsts [][]byte, i int, v []byte) []byte {
	var dst []byte
	if dsts != nil {
		dst = dsts[i]
	}
	return append(dst, v...)
}

// readPieces reads the pieces of every chunked value in one pipeline a
// node, and fills out for those whose pieces match their header (put ID,
// index, the value's CRC); the others are misses (torn: replaced or
// deleted as they were read).
func (s *Store) readPieces(ctx context.Context, c rueidis.Client, gen uint64, vals []pending, dsts [][]byte, out []backend.Result) error {
	var cmds rueidis.Commands
	for _, p := range vals {
		for n := uint32(0); n < p.h.chunks; n++ {
			cmds = append(cmds, c.B().Get().Key(s.chunkKey(gen, p.h.putID, n)).Build())
		}
	}
	res := c.DoMulti(ctx, cmds...)
	var firstErr error
	at := 0
	for _, p := range vals {
		var dst []byte
		if dsts != nil {
			dst = dsts[p.i]
		}
		base := len(dst)
		ok := true
		for n := uint32(0); n < p.h.chunks; n++ {
			r := res[at]
			at++
			if !ok {
				continue
			}
			b, err := r.AsBytes()
			if err != nil {
				if !rueidis.IsRedisNil(err) {
					firstErr = cmp(firstErr, err)
					out[p.i].Err = err
				}
				ok = false
				continue
			}
			s.st.bytesRead.Add(uint64(len(b)))
			piece, good := chunkPiece(b, p.h.putID, n)
			if !good {
				ok = false
				continue
			}
			dst = append(dst, piece...)
		}
		v := dst[base:]
		if !ok || uint64(len(v)) != p.h.length || crc32.Checksum(v, castagnoli) != p.h.crc {
			if out[p.i].Err == nil {
				s.st.torn.Add(1)
			}
			continue
		}
		out[p.i] = backend.Result{Value: dst, Meta: p.m, Found: true}
	}
	return firstErr
}

// HasMany reports which keys the store holds, live, from each record's
// header and expiry alone (GETRANGE of the header and PEXPIRETIME, one
// pipeline a node): no value is read. A key whose round trip failed is
// absent with its error (R1); bytes that are not a record of ours are
// absent, counted as foreign (R2).
func (s *Store) HasMany(ctx context.Context, keys [][]byte) ([]bool, []error) {
	has, errs := make([]bool, len(keys)), make([]error, len(keys))
	c := s.conn()
	if c == nil {
		for i := range errs {
			errs[i] = ErrUnavailable
		}
		return has, errs
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	gen := s.gen.Load()
	cmds := make(rueidis.Commands, 0, 2*len(keys))
	for _, k := range keys {
		dk := s.dataKey(gen, k)
		cmds = append(cmds, s.headerCmd(c, dk), c.B().Pexpiretime().Key(dk).Build())
	}
	res := s.doMany(ctx, c, cmds)
	now := time.Now().UnixNano()
	var firstErr error
	for i := range keys {
		b, err := res[2*i].AsBytes()
		ms, err2 := res[2*i+1].AsInt64()
		switch {
		case wrongType(err):
			s.st.foreign.Add(1)
			continue
		case err == nil:
			err = err2
		}
		if err != nil {
			if !rueidis.IsRedisNil(err) {
				errs[i], firstErr = err, cmp(firstErr, err)
			}
			continue
		}
		if len(b) == 0 || ms == -2 || ms > 0 && backend.Expired(backend.ExpiryFromMillis(ms), now) {
			continue // absent (GETRANGE answers "" for an absent key), or past its expiry
		}
		if h, ok := parseHeader(b); !ok || h.length > uint64(s.maxValue) {
			s.st.foreign.Add(1)
			continue
		}
		has[i] = true
	}
	s.outcome(start, firstErr)
	return has, errs
}
