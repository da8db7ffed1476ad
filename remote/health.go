package remote

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
	"github.com/tiercache/tiercache/backend"
	"go.uber.org/zap"
)

// health runs every Config.Health until Close: it connects a store that
// has no client yet, pings every node the client knows (which keeps a
// tracking connection open to each, and is the breaker's probe), and,
// once every node answered after invalidations may have been lost (a
// connection closed, or the generation key changed), reloads the
// generation and tells Watch that any key may have changed (R3).
func (s *Store) health() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.Health)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.RLock()
		c := s.client
		s.mu.RUnlock()
		if c == nil {
			if !s.br.probing() {
				continue
			}
			if err := s.connect(); err != nil {
				s.br.failure(err)
				continue
			}
			s.br.success()
			s.resync.Store(true) // keys may have changed while we could not hear of it
			continue
		}
		err := s.ping(c)
		if err != nil {
			if s.br.probing() || s.br.closedFast.Load() {
				s.br.failure(err)
			}
			continue
		}
		if s.br.probing() {
			s.br.success()
		}
		if s.redial.Load() {
			s.redialNow(c)
			continue
		}
		if !s.resync.Load() {
			s.checkGen(c)
		}
		if s.resync.Load() && s.clusterOK(c) {
			s.resyncNow(c)
		}
	}
}

// ping sends PING to every node the client knows, together.
func (s *Store) ping(c rueidis.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.Timeout, 100*time.Millisecond))
	defer cancel()
	nodes := c.Nodes()
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		go func() { errs <- n.Do(ctx, n.B().Ping().Build()).Error() }()
	}
	var first error
	for range nodes {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// checkGen reads the generation key and asks for a resync if it is not
// the store's generation (R9): the key was evicted or lost, or another
// sidecar's Clear was not heard of (an invalidation lost without the
// connection closing). Reading it each health round also keeps it recent
// for an LRU or LFU eviction policy.
func (s *Store) checkGen(c rueidis.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.Timeout, 100*time.Millisecond))
	defer cancel()
	s.genMu.Lock() // a Clear of this store's between the read and the check is no change
	defer s.genMu.Unlock()
	v, err := c.Do(ctx, c.B().Get().Key(s.genKey()).Build()).ToString()
	switch {
	case rueidis.IsRedisNil(err):
	case err != nil:
		return // the ping answered: a timeout here is the next round's business
	case v == strconv.FormatUint(s.gen.Load(), 10):
		return
	}
	s.resync.Store(true)
}

// clusterOK reports whether the remote serves every slot now (CLUSTER
// INFO's cluster_state:ok), or is not a cluster: a resync waits for it, so
// that the keys of a failed master's slots are read again once its
// replica took over, not while they time out.
func (s *Store) clusterOK(c rueidis.Client) bool {
	ctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.Timeout, 100*time.Millisecond))
	defer cancel()
	info, err := c.Do(ctx, c.B().ClusterInfo().Build()).ToString()
	if err != nil {
		return strings.Contains(err.Error(), "cluster support disabled")
	}
	return strings.Contains(info, "cluster_state:ok")
}

// resyncNow reloads the generation and tells Watch that the store was
// cleared (the generation moved) or that any key may have changed.
func (s *Store) resyncNow(c rueidis.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.Timeout, 100*time.Millisecond))
	defer cancel()
	s.genMu.Lock() // a Clear between the read and the Swap would be undone
	defer s.genMu.Unlock()
	s.resync.Store(false)
	g, err := s.loadGen(ctx, c)
	if err != nil {
		s.resync.Store(true)
		s.log.Warn("remote: reload the generation", zap.Error(err))
		return
	}
	ch := backend.Change{Lost: true}
	if old := s.gen.Swap(g); old != g {
		s.log.Info("remote tier cleared by another sidecar, or its generation key was evicted or lost", zap.Uint64("generation", g), zap.Uint64("was", old))
		ch = backend.Change{Cleared: true}
	}
	s.st.resyncs.Add(1)
	if fn := s.watch.Load(); fn != nil {
		(*fn)(ch)
	}
}

// startSweep starts removing the keys of generations before gen on c,
// unless a sweep runs already (R6).
func (s *Store) startSweep(c rueidis.Client, gen uint64) {
	if s.sweeping.Swap(true) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.sweeping.Store(false)
		if err := s.sweep(c, gen); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("remote: sweep of earlier generations stopped", zap.Error(err))
		}
	}()
}

// sweep walks every master with SCAN over the prefix's data and chunk keys
// and unlinks those of a generation before gen.
func (s *Store) sweep(c rueidis.Client, gen uint64) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	match := globEscape(s.cfg.Prefix) + "[dc]*"
	for _, n := range c.Nodes() {
		role, err := n.Do(ctx, n.B().Role().Build()).ToArray()
		if err != nil || len(role) == 0 {
			continue
		}
		if r, _ := role[0].ToString(); r != "master" {
			continue
		}
		var cursor uint64
		for {
			e, err := n.Do(ctx, n.B().Scan().Cursor(cursor).Match(match).Count(1000).Build()).AsScanEntry()
			if err != nil {
				return err
			}
			var old []string
			for _, k := range e.Elements {
				if g, ok := s.keyGen(k); ok && g < gen {
					old = append(old, k)
				}
			}
			if len(old) > 0 {
				cmds := make(rueidis.Commands, len(old))
				for i, k := range old {
					cmds[i] = c.B().Unlink().Key(k).Build()
				}
				for _, r := range c.DoMulti(ctx, cmds...) {
					if r.Error() == nil {
						s.st.swept.Add(1)
					}
				}
			}
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
	return nil
}
