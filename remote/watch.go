package remote

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"
	"github.com/tiercache/tiercache/backend"
)

// Watch sets the function told of other writers' changes (R3).
func (s *Store) Watch(fn func(backend.Change)) { s.watch.Store(&fn) }

// onInvalidations is the client's push handler: the keys another sidecar
// changed (nil: a connection closed, so pushes may have been lost).
func (s *Store) onInvalidations(msgs []rueidis.RedisMessage) {
	if s.closed.Load() {
		return
	}
	if msgs == nil {
		s.resync.Store(true)
		return
	}
	gen := s.gen.Load()
	var keys [][]byte
	for _, m := range msgs {
		k, err := m.ToString()
		if err != nil {
			continue
		}
		if k == s.genKey() {
			s.resync.Store(true) // another sidecar cleared the store: the health loop reloads the generation
			continue
		}
		if g, key, ok := s.parseDataKey(k); ok && g == gen {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return
	}
	s.st.invalidations.Add(uint64(len(keys)))
	if fn := s.watch.Load(); fn != nil {
		(*fn)(backend.Change{Keys: keys})
	}
}

// Clear starts a new generation: every key stored so far is absent for
// every sidecar at once (the others hear of it through the generation
// key's invalidation), and the old keys are swept in the background (R6).
func (s *Store) Clear(ctx context.Context) error {
	c := s.conn()
	if c == nil {
		return ErrUnavailable
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	s.genMu.Lock()
	defer s.genMu.Unlock()
	start := time.Now()
	// The INCR ends this connection's tracking of the generation key (a
	// write drops every tracker of a key; NOLOOP only keeps the writer
	// from hearing of it): the GET in the same transaction tracks it
	// again, so another store's later Clear reaches this one (R3).
	res, err := s.tx(ctx, c, c.B().Incr().Key(s.genKey()).Build(), c.B().Get().Key(s.genKey()).Build())
	var g int64
	if err == nil {
		g, err = res[0].AsInt64()
	}
	if err != nil && s.refused(err) {
		s.outcome(start, nil) // the remote answers: a refusal is no failure (R7)
		if refusedBy(err) == refusedOOM {
			// At maxmemory under noeviction the INCR is refused until
			// memory is freed, and a FLUSHALL frees none: unlink this
			// generation's keys too (UNLINK is taken at maxmemory), which
			// the caller's retry then finds room after (R11). They are
			// as good as gone: the Clear was asked for.
			s.startSweep(c, s.gen.Load()+1)
		}
	} else {
		s.outcome(start, err)
	}
	if err != nil {
		return fmt.Errorf("remote: start a new generation: %w", err)
	}
	s.gen.Store(uint64(g))
	s.startSweep(c, uint64(g))
	return nil
}
