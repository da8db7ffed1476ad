package remote

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
)

// Every write of a data key is a transaction of its own, MULTI, GETRANGE of
// the old record's header, the write, PEXPIRETIME of the key, EXEC: a write (ours too, under NOLOOP) ends this
// connection's tracking of the key on the server, and the read after it in
// the same transaction starts it again, with no other client's write
// between the two (R3). Transactions of many keys run together: the client
// pipelines them on each node's connection.

// PutMany stores every item (a put: Key, Value, Expiry, Flags; the
// Version is the writer's and is not kept): the pieces of chunked values
// first, then each record with SET, after the header of the record it
// replaces; a replaced chunked record's pieces get a short expiry (R4).
// items[i].Err is its outcome.
func (s *Store) PutMany(ctx context.Context, items []*flusher.Item) error {
	c := s.conn()
	if c == nil {
		for _, it := range items {
			it.Err = ErrUnavailable
		}
		return ErrUnavailable
	}
	bytes := 0
	for _, it := range items {
		bytes += len(it.Value)
	}
	ctx, cancel := context.WithTimeout(ctx, s.bulkTimeout(bytes))
	defer cancel()
	start := time.Now()
	gen := s.gen.Load()
	var pieces rueidis.Commands
	var pieceOf []int
	recs := make([][]byte, len(items))
	for i, it := range items {
		it.Err = nil
		if len(it.Value) > s.maxValue {
			it.Err = fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(it.Value), s.maxValue)
			continue
		}
		if len(it.Value) <= s.cfg.ChunkBytes {
			recs[i] = inlineRecord(it.Value, it.Flags)
			s.st.bytesWritten.Add(uint64(len(recs[i])))
			continue
		}
		h := header{chunked: true, flags: it.Flags, crc: crc32.Checksum(it.Value, castagnoli), length: uint64(len(it.Value)),
			putID: newPutID(), chunkBytes: uint32(s.cfg.ChunkBytes)}
		h.chunks = uint32((len(it.Value) + s.cfg.ChunkBytes - 1) / s.cfg.ChunkBytes)
		for n := uint32(0); n < h.chunks; n++ {
			lo := int(n) * s.cfg.ChunkBytes
			piece := chunkRecord(h.putID, n, it.Value[lo:min(lo+s.cfg.ChunkBytes, len(it.Value))])
			set := c.B().Set().Key(s.chunkKey(gen, h.putID, n)).Value(rueidis.BinaryString(piece))
			if it.Expiry != 0 { // a piece outlives its header by the grace
				pieces = append(pieces, set.PxatMillisecondsTimestamp(pxatMs(it.Expiry, chunkGrace)).Build())
			} else {
				pieces = append(pieces, set.Build())
			}
			pieceOf = append(pieceOf, i)
			s.st.bytesWritten.Add(uint64(len(piece)))
		}
		recs[i] = make([]byte, HeaderBytes)
		h.encode(recs[i])
		s.st.bytesWritten.Add(HeaderBytes)
	}
	if len(pieces) > 0 {
		for j, r := range s.doMany(ctx, c, pieces) {
			if err := r.Error(); err != nil {
				items[pieceOf[j]].Err = cmp(items[pieceOf[j]].Err, err)
			}
		}
	}
	var todo []int
	for i, it := range items {
		if it.Err == nil {
			todo = append(todo, i) // a value whose pieces did not all land gets no header
		}
	}
	var mu sync.Mutex
	var olds []header
	s.each(len(todo), func(j int) {
		it := items[todo[j]]
		dk := s.dataKey(gen, it.Key)
		set := c.B().Set().Key(dk).Value(rueidis.BinaryString(recs[todo[j]]))
		var cmd rueidis.Completed
		if it.Expiry != 0 {
			cmd = set.PxatMillisecondsTimestamp(pxatMs(it.Expiry, 0)).Build()
		} else {
			cmd = set.Build()
		}
		// The old record's header alone (a key of another type answers
		// WRONGTYPE there, and SET replaces it all the same).
		res, err := s.tx(ctx, c, s.headerCmd(c, dk), cmd, c.B().Pexpiretime().Key(dk).Build())
		if err == nil {
			err = res[1].Error()
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			it.Err = err
			return
		}
		if h, ok := chunkedHeader(res[0]); ok {
			olds = append(olds, h)
		}
	})
	s.expirePieces(ctx, c, gen, olds)
	// A refused write is no failure of the remote (R7); a put refused for
	// memory removes the key's old record instead (DEL is taken under
	// maxmemory: Redis refuses only commands that may grow memory), so
	// no store reads the value this put replaced (R8).
	var failed writeErrs
	var oom [][]byte
	for _, it := range items {
		if it.Err == nil || errors.Is(it.Err, ErrTooLarge) {
			continue
		}
		if failed.add(s, it.Err) == refusedOOM {
			oom = append(oom, it.Key)
		}
	}
	if len(oom) > 0 {
		for _, err := range s.dropRecords(ctx, c, gen, oom) {
			if err != nil {
				failed.add(s, err)
			}
		}
	}
	s.outcome(start, failed.failure)
	return failed.first()
}

// writeErrs sorts the errors of a write's keys: the first failure (the
// breaker's business) and the first refusal (R7).
type writeErrs struct{ failure, refusal error }

// add records err of one key and says whether it was a refusal, and which.
func (w *writeErrs) add(s *Store, err error) refusal {
	if s.refused(err) {
		w.refusal = cmp(w.refusal, err)
		return refusedBy(err)
	}
	w.failure = cmp(w.failure, err)
	return notRefused
}

func (w *writeErrs) first() error { return cmp(w.failure, w.refusal) }

// headerCmd reads the first HeaderBytes of key: the header of the record
// a write replaces, without its value.
func (s *Store) headerCmd(c rueidis.Client, key string) rueidis.Completed {
	return c.B().Getrange().Key(key).Start(0).End(HeaderBytes - 1).Build()
}

// tx runs cmds as one MULTI/EXEC transaction and returns EXEC's replies,
// one per command (each may carry its own error), or the error that kept
// the transaction from running.
func (s *Store) tx(ctx context.Context, c rueidis.Client, cmds ...rueidis.Completed) ([]rueidis.RedisResult, error) {
	all := make(rueidis.Commands, 0, len(cmds)+2)
	all = append(all, c.B().Multi().Build())
	all = append(all, cmds...)
	all = append(all, c.B().Exec().Build())
	res := c.DoMulti(ctx, all...)
	for _, r := range res[:len(res)-1] {
		if err := r.Error(); err != nil {
			return nil, err
		}
	}
	msgs, err := res[len(res)-1].ToArray()
	if err != nil {
		return nil, err
	}
	if len(msgs) != len(cmds) {
		return nil, fmt.Errorf("remote: EXEC answered %d replies for %d commands", len(msgs), len(cmds))
	}
	out := make([]rueidis.RedisResult, len(msgs))
	for i := range msgs {
		out[i] = rueidis.NewResult(msgs[i], nil)
	}
	return out, nil
}

// each calls fn(0..n-1) concurrently, at most maxConcurrentTx at a time,
// and returns when all returned: the client pipelines the concurrent
// calls on each node's one connection.
func (s *Store) each(n int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrentTx)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// maxConcurrentTx bounds the transactions of one call in flight at once.
const maxConcurrentTx = 256

// wrongType reports a WRONGTYPE reply: the key holds another type of value
// than a string, so it is not a record of ours.
func wrongType(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && strings.HasPrefix(re.Error(), "WRONGTYPE")
}

// chunkedHeader is the header of a chunked record r's reply holds
// (GETRANGE's first bytes of a record).
func chunkedHeader(r rueidis.RedisResult) (header, bool) {
	b, err := r.AsBytes()
	if err != nil || len(b) < HeaderBytes {
		return header{}, false
	}
	h, ok := decodeHeader(b[:HeaderBytes])
	return h, ok && h.chunked
}

// maxPipeline is the most commands one DoMulti sends: rueidis sends a
// larger one on a pooled connection of its own.
const maxPipeline = 1000

// doMany is DoMulti in pieces of at most maxPipeline commands.
func (s *Store) doMany(ctx context.Context, c rueidis.Client, cmds rueidis.Commands) []rueidis.RedisResult {
	if len(cmds) <= maxPipeline {
		return c.DoMulti(ctx, cmds...)
	}
	out := make([]rueidis.RedisResult, 0, len(cmds))
	for len(cmds) > 0 {
		n := min(len(cmds), maxPipeline)
		out = append(out, c.DoMulti(ctx, cmds[:n]...)...)
		cmds = cmds[n:]
	}
	return out
}

// pxatMs is the millisecond at or after expiry exp (backend.Meta.Expiry)
// + extra.
func pxatMs(exp int64, extra time.Duration) int64 {
	ms := backend.ExpiryMillis(exp) + extra.Milliseconds()
	if ms < 0 { // past the largest int64 millisecond, which Redis refuses
		return math.MaxInt64
	}
	return ms
}

// expirePieces gives the pieces of replaced or deleted chunked records
// chunkGrace to live: a reader that read the old header still finds them
// (best effort; a piece left over expires with its value's expiry, if
// any, or is swept with its generation).
func (s *Store) expirePieces(ctx context.Context, c rueidis.Client, gen uint64, hs []header) {
	var cmds rueidis.Commands
	for _, h := range hs {
		for n := uint32(0); n < h.chunks; n++ {
			cmds = append(cmds, c.B().Pexpire().Key(s.chunkKey(gen, h.putID, n)).Milliseconds(chunkGrace.Milliseconds()).Build())
		}
	}
	if len(cmds) > 0 {
		s.doMany(ctx, c, cmds)
	}
}

// Delete removes key (an absent key is not an error, B1).
func (s *Store) Delete(ctx context.Context, key []byte) error {
	return s.DeleteMany(ctx, [][]byte{key})[0]
}

// DeleteMany removes keys, each in a transaction that reads its header
// and deletes it, many in flight together; the pieces of chunked values
// get a short expiry (R4). This store holds no copy of a deleted key, so
// it needs no tracking of it afterwards.
func (s *Store) DeleteMany(ctx context.Context, keys [][]byte) []error {
	c := s.conn()
	if c == nil {
		errs := make([]error, len(keys))
		for i := range errs {
			errs[i] = ErrUnavailable
		}
		return errs
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	errs := s.deleteMany(ctx, c, s.gen.Load(), keys)
	var failed writeErrs
	for _, err := range errs {
		if err != nil {
			failed.add(s, err)
		}
	}
	s.outcome(start, failed.failure)
	return errs
}

// deleteMany is DeleteMany's round trips on c in generation gen.
func (s *Store) deleteMany(ctx context.Context, c rueidis.Client, gen uint64, keys [][]byte) []error {
	errs := make([]error, len(keys))
	var mu sync.Mutex
	var olds []header
	s.each(len(keys), func(i int) {
		dk := s.dataKey(gen, keys[i])
		// DEL removes a key of any type (GETRANGE answers WRONGTYPE for
		// one not ours).
		res, err := s.tx(ctx, c, s.headerCmd(c, dk), c.B().Del().Key(dk).Build())
		if err == nil {
			err = res[1].Error()
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs[i] = err
			return
		}
		if h, ok := chunkedHeader(res[0]); ok {
			olds = append(olds, h)
		}
	})
	s.expirePieces(ctx, c, gen, olds)
	var oom []int
	for i, err := range errs {
		if refusedBy(err) == refusedOOM {
			oom = append(oom, i)
		}
	}
	if len(oom) > 0 {
		ks := make([][]byte, len(oom))
		for j, i := range oom {
			ks[j] = keys[i]
		}
		for j, err := range s.dropRecords(ctx, c, gen, ks) {
			errs[oom[j]] = err
		}
	}
	return errs
}

// dropRecords removes keys' records with GETDEL, each a command of its own
// (R8): at maxmemory Redis refuses every command queued in a MULTI, and
// any command that may grow memory, but takes GETDEL and PEXPIRE (Redis
// 7.0's command table: neither is flagged denyoom). The pieces of a
// chunked record get the grace to live (R4). It reads a small record
// whole; it serves writes the remote refused, not the common path.
func (s *Store) dropRecords(ctx context.Context, c rueidis.Client, gen uint64, keys [][]byte) []error {
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		cmds[i] = c.B().Getdel().Key(s.dataKey(gen, k)).Build()
	}
	errs := make([]error, len(keys))
	var olds []header
	for i, r := range s.doMany(ctx, c, cmds) {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) && !wrongType(err) {
			errs[i] = err
			continue
		}
		if h, ok := chunkedHeader(r); ok {
			olds = append(olds, h)
		}
	}
	s.expirePieces(ctx, c, gen, olds)
	return errs
}

// RetimeMany gives each key the expiry exps[i] (PEXPIREAT, or PERSIST for
// 0), each in a transaction that reads its header and tracks it again; a
// chunked value's pieces follow, outliving it by the grace (R4).
func (s *Store) RetimeMany(ctx context.Context, keys [][]byte, exps []int64) []error {
	errs := make([]error, len(keys))
	c := s.conn()
	if c == nil {
		for i := range errs {
			errs[i] = ErrUnavailable
		}
		return errs
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	gen := s.gen.Load()
	var mu sync.Mutex
	var pieces rueidis.Commands
	var failed writeErrs
	s.each(len(keys), func(i int) {
		dk := s.dataKey(gen, keys[i])
		res, err := s.tx(ctx, c, s.headerCmd(c, dk), s.expireCmd(c, dk, exps[i], 0), c.B().Pexpiretime().Key(dk).Build())
		if err == nil {
			err = res[1].Error()
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs[i] = err
			failed.add(s, err)
			return
		}
		h, ok := chunkedHeader(res[0])
		if !ok {
			return
		}
		for n := uint32(0); n < h.chunks; n++ {
			pieces = append(pieces, s.expireCmd(c, s.chunkKey(gen, h.putID, n), exps[i], chunkGrace))
		}
	})
	if len(pieces) > 0 {
		if err := roundTripErr(s.doMany(ctx, c, pieces)); err != nil && refusedBy(err) == notRefused {
			failed.failure = cmp(failed.failure, err)
		}
	}
	// A new expiry refused for memory drops the key (R8): no store reads
	// it past the expiry it was given.
	var oom [][]byte
	var at []int
	for i, err := range errs {
		if refusedBy(err) == refusedOOM {
			oom, at = append(oom, keys[i]), append(at, i)
		}
	}
	if len(oom) > 0 {
		for j, err := range s.dropRecords(ctx, c, gen, oom) {
			if err != nil {
				errs[at[j]] = err
				failed.add(s, err)
			}
		}
	}
	s.outcome(start, failed.failure)
	return errs
}

// expireCmd is PEXPIREAT key (exp + extra), or PERSIST key for exp 0.
func (s *Store) expireCmd(c rueidis.Client, key string, exp int64, extra time.Duration) rueidis.Completed {
	if exp == 0 {
		return c.B().Persist().Key(key).Build()
	}
	return c.B().Pexpireat().Key(key).MillisecondsTimestamp(pxatMs(exp, extra)).Build()
}
