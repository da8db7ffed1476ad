package server

import (
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/tier"
)

// eventQueue carries the cache's removals (tierRemoval, called under a
// tier lock) to a goroutine that publishes their events and invalidates
// their trackers. It holds at most maxTierEvents; past that the removals
// are dropped and counted, and every tracked key is invalidated instead
// (a tracking client must never keep a value the cache changed).
type eventQueue struct {
	s       *Server
	mu      sync.Mutex
	q       []tierEvent
	over    bool
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	dropped atomic.Uint64
}

type tierEvent struct {
	key []byte
	why tier.Removal
}

const maxTierEvents = 1 << 16

func newEventQueue(s *Server) *eventQueue {
	q := &eventQueue{s: s, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go q.loop()
	return q
}

func (q *eventQueue) put(key []byte, why tier.Removal) {
	q.mu.Lock()
	if len(q.q) >= maxTierEvents {
		q.over = true
		q.dropped.Add(1)
	} else {
		q.q = append(q.q, tierEvent{key: append([]byte(nil), key...), why: why})
	}
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

func (q *eventQueue) loop() {
	defer close(q.done)
	for {
		select {
		case <-q.stop:
			return
		case <-q.kick:
		}
		q.mu.Lock()
		evs, over := q.q, q.over
		q.q, q.over = nil, false
		q.mu.Unlock()
		s := q.s
		for _, ev := range evs {
			switch ev.why {
			case tier.Expired:
				s.publishEvent(notifyExpired, "expired", ev.key)
				s.trk.invalidate(nil, [][]byte{ev.key})
			case tier.Evicted:
				s.publishEvent(notifyEvicted, "evicted", ev.key)
				s.trk.invalidate(nil, [][]byte{ev.key})
			case tier.RemoteChanged:
				s.trk.invalidate(nil, [][]byte{ev.key})
			case tier.Flushed:
				s.trk.invalidateAll()
			}
		}
		if over {
			s.trk.invalidateAll()
		}
	}
}

func (q *eventQueue) close() {
	close(q.stop)
	<-q.done
}
