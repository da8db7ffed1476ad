package pubsub

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/resp"
)

// Subscriber is a client that receives messages. Deliver hands it one
// message, RESP2-encoded (an array; a RESP3 client sends the same bytes
// with '>' for the first, as a push). It must not block nor keep msg, and
// reports false when the client refused it (it was past its output
// limit and is being disconnected): the message counts as dropped.
type Subscriber interface {
	Deliver(msg []byte) bool
}

// Options configure a Registry.
type Options struct {
	// Match reports whether a channel matches a pattern (Redis's glob,
	// stringmatchlen). Required.
	Match func(pattern, channel string) bool
}

// Registry is the server's channels and patterns and who subscribes to
// them. Its methods may be called from any goroutine.
type Registry struct {
	match func(pattern, channel string) bool

	mu       sync.RWMutex
	channels map[string][]Subscriber // subscribers in the order they came
	patterns map[string][]Subscriber
	// subs is each subscriber's channels and patterns, in the order it
	// subscribed (UNSUBSCRIBE without arguments answers in that order).
	subs map[Subscriber]*Subscriptions

	published, delivered, dropped atomic.Uint64
	bufs                          sync.Pool
}

// Subscriptions are one subscriber's channels and patterns.
type Subscriptions struct {
	Channels, Patterns []string
}

// Count is what SUBSCRIBE's replies count: channels plus patterns.
func (s *Subscriptions) Count() int {
	if s == nil {
		return 0
	}
	return len(s.Channels) + len(s.Patterns)
}

// Stats are the registry's counters.
type Stats struct {
	Channels, Patterns int    // with at least one subscriber
	Published          uint64 // PUBLISH calls (and notifications) sent
	Delivered          uint64 // messages handed to subscribers
	Dropped            uint64 // refused by a subscriber past its limit
}

// New returns an empty Registry.
func New(o Options) *Registry {
	return &Registry{match: o.Match, channels: map[string][]Subscriber{}, patterns: map[string][]Subscriber{},
		subs: map[Subscriber]*Subscriptions{}}
}

// Subscribe adds s to channel (a pattern with pattern set). It reports the
// subscriber's count of channels and patterns after it (unchanged if it
// was there already).
func (r *Registry) Subscribe(s Subscriber, name string, pattern bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	ss := r.subs[s]
	if ss == nil {
		ss = &Subscriptions{}
		r.subs[s] = ss
	}
	own, all := &ss.Channels, r.channels
	if pattern {
		own, all = &ss.Patterns, r.patterns
	}
	if !slices.Contains(*own, name) {
		*own = append(*own, name)
		all[name] = append(all[name], s)
	}
	return ss.Count()
}

// Unsubscribe removes s from channel (pattern) and reports the count
// after it.
func (r *Registry) Unsubscribe(s Subscriber, name string, pattern bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	ss := r.subs[s]
	if ss == nil {
		return 0
	}
	own, all := &ss.Channels, r.channels
	if pattern {
		own, all = &ss.Patterns, r.patterns
	}
	if i := slices.Index(*own, name); i >= 0 {
		*own = slices.Delete(*own, i, i+1)
		list := all[name]
		if j := slices.Index(list, s); j >= 0 {
			list = slices.Delete(list, j, j+1)
		}
		if len(list) == 0 {
			delete(all, name)
		} else {
			all[name] = list
		}
	}
	n := ss.Count()
	if n == 0 {
		delete(r.subs, s)
	}
	return n
}

// Of returns a copy of s's channels and patterns.
func (r *Registry) Of(s Subscriber) Subscriptions {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ss := r.subs[s]
	if ss == nil {
		return Subscriptions{}
	}
	return Subscriptions{Channels: slices.Clone(ss.Channels), Patterns: slices.Clone(ss.Patterns)}
}

// Leave removes s from everything (its connection closed).
func (r *Registry) Leave(s Subscriber) {
	ss := r.Of(s)
	for _, ch := range ss.Channels {
		r.Unsubscribe(s, ch, false)
	}
	for _, p := range ss.Patterns {
		r.Unsubscribe(s, p, true)
	}
}

// Publish sends message to channel's subscribers, then to the
// subscribers of every pattern channel matches (Redis's order:
// pubsubPublishMessageInternal), and returns how many received it.
func (r *Registry) Publish(channel, message []byte) int {
	r.published.Add(1)
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := 0
	bp, _ := r.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer r.bufs.Put(bp)
	if list := r.channels[string(channel)]; len(list) > 0 {
		*bp = AppendMessage((*bp)[:0], "message", nil, channel, message)
		n += r.deliver(list, *bp)
	}
	if len(r.patterns) > 0 {
		ch := string(channel)
		for p, list := range r.patterns {
			if !r.match(p, ch) {
				continue
			}
			*bp = AppendMessage((*bp)[:0], "pmessage", []byte(p), channel, message)
			n += r.deliver(list, *bp)
		}
	}
	return n
}

func (r *Registry) deliver(list []Subscriber, msg []byte) int {
	var ok uint64
	for _, s := range list {
		if s.Deliver(msg) {
			ok++
		}
	}
	r.delivered.Add(ok)
	r.dropped.Add(uint64(len(list)) - ok)
	return len(list)
}

// Channels returns the channels with a subscriber that match pattern (all
// with match nil), in no order (PUBSUB CHANNELS).
func (r *Registry) Channels(match func(string) bool) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for ch := range r.channels {
		if match == nil || match(ch) {
			out = append(out, ch)
		}
	}
	return out
}

// NumSub is channel's subscriber count (PUBSUB NUMSUB).
func (r *Registry) NumSub(channel string) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.channels[channel])
}

// NumPat is the number of patterns with a subscriber (PUBSUB NUMPAT).
func (r *Registry) NumPat() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.patterns)
}

// Stats returns the registry's counters.
func (r *Registry) Stats() Stats {
	r.mu.RLock()
	st := Stats{Channels: len(r.channels), Patterns: len(r.patterns)}
	r.mu.RUnlock()
	st.Published, st.Delivered, st.Dropped = r.published.Load(), r.delivered.Load(), r.dropped.Load()
	return st
}

// AppendMessage appends a pub/sub message as Redis sends it to a RESP2
// client (pubsub.c addReplyPubsubMessage, addReplyPubsubPatMessage):
// [kind, channel, message], or [kind, pattern, channel, message] when
// pattern is set.
func AppendMessage(dst []byte, kind string, pattern, channel, message []byte) []byte {
	n := 3
	if pattern != nil {
		n = 4
	}
	dst = resp.AppendArray(dst, n)
	dst = resp.AppendBulk(dst, []byte(kind))
	if pattern != nil {
		dst = resp.AppendBulk(dst, pattern)
	}
	dst = resp.AppendBulk(dst, channel)
	return resp.AppendBulk(dst, message)
}
