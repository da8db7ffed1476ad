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

// Registry is the server's channels, patterns and shard channels and who
// subscribes to them. Its methods may be called from any goroutine.
type Registry struct {
	match func(pattern, channel string) bool

	mu sync.RWMutex
	// subscribers of each channel, pattern and shard channel (by Kind),
	// in the order they came
	lists [kinds]map[string][]Subscriber
	// subs is each subscriber's channels, patterns and shard channels, in
	// the order it subscribed (UNSUBSCRIBE without arguments answers in
	// that order).
	subs map[Subscriber]*Subscriptions

	published, delivered, dropped atomic.Uint64
	bufs                          sync.Pool
}

// Subscriptions are one subscriber's channels, patterns and shard
// channels.
type Subscriptions struct {
	Channels, Patterns, Shards []string
}

// Count is what SUBSCRIBE's and PSUBSCRIBE's replies count: channels plus
// patterns (pubsub.c clientSubscriptionsCount).
func (s *Subscriptions) Count() int {
	if s == nil {
		return 0
	}
	return len(s.Channels) + len(s.Patterns)
}

// CountOf is what the replies of a subscription of kind k count: channels
// plus patterns, or for a shard channel the shard channels alone
// (clientShardSubscriptionsCount).
func (s *Subscriptions) CountOf(k Kind) int {
	if k == Shard {
		if s == nil {
			return 0
		}
		return len(s.Shards)
	}
	return s.Count()
}

// Total is every subscription of the subscriber: while it is not 0 a
// RESP2 connection is in subscribed mode (Redis's CLIENT_PUBSUB flag).
func (s *Subscriptions) Total() int {
	if s == nil {
		return 0
	}
	return len(s.Channels) + len(s.Patterns) + len(s.Shards)
}

// Of is the subscriber's names of kind k, in the order it subscribed.
func (s *Subscriptions) Of(k Kind) []string { return *s.of(k) }

func (s *Subscriptions) of(k Kind) *[]string {
	switch k {
	case Pattern:
		return &s.Patterns
	case Shard:
		return &s.Shards
	}
	return &s.Channels
}

// Stats are the registry's counters.
type Stats struct {
	Channels, Patterns, ShardChannels int    // with at least one subscriber
	Published                         uint64 // PUBLISH and SPUBLISH calls (and notifications) sent
	Delivered                         uint64 // messages handed to subscribers
	Dropped                           uint64 // refused by a subscriber past its limit
}

// New returns an empty Registry.
func New(o Options) *Registry {
	r := &Registry{match: o.Match, subs: map[Subscriber]*Subscriptions{}}
	for k := range r.lists {
		r.lists[k] = map[string][]Subscriber{}
	}
	return r
}

// Subscribe adds s to name, a channel, pattern or shard channel as k
// says. It reports the count the subscription's reply carries
// (Subscriptions.CountOf) and all of s's subscriptions (Total) after it,
// both unchanged if it was there already.
func (r *Registry) Subscribe(s Subscriber, name string, k Kind) (count, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ss := r.subs[s]
	if ss == nil {
		ss = &Subscriptions{}
		r.subs[s] = ss
	}
	own, all := ss.of(k), r.lists[k]
	if !slices.Contains(*own, name) {
		*own = append(*own, name)
		all[name] = append(all[name], s)
	}
	return ss.CountOf(k), ss.Total()
}

// Unsubscribe removes s from name (of kind k) and reports the counts
// after it, as Subscribe does.
func (r *Registry) Unsubscribe(s Subscriber, name string, k Kind) (count, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ss := r.subs[s]
	if ss == nil {
		return 0, 0
	}
	own, all := ss.of(k), r.lists[k]
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
	count, total = ss.CountOf(k), ss.Total()
	if total == 0 {
		delete(r.subs, s)
	}
	return count, total
}

// Of returns a copy of s's subscriptions.
func (r *Registry) Of(s Subscriber) Subscriptions {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ss := r.subs[s]
	if ss == nil {
		return Subscriptions{}
	}
	return Subscriptions{Channels: slices.Clone(ss.Channels), Patterns: slices.Clone(ss.Patterns),
		Shards: slices.Clone(ss.Shards)}
}

// Leave removes s from everything (its connection closed).
func (r *Registry) Leave(s Subscriber) {
	ss := r.Of(s)
	for k := range kinds {
		for _, name := range *ss.of(k) {
			r.Unsubscribe(s, name, k)
		}
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
	bp := r.buf()
	defer r.bufs.Put(bp)
	if list := r.lists[Channel][string(channel)]; len(list) > 0 {
		*bp = AppendMessage((*bp)[:0], names[Channel].message, nil, channel, message)
		n += r.deliver(list, *bp)
	}
	if patterns := r.lists[Pattern]; len(patterns) > 0 {
		ch := string(channel)
		for p, list := range patterns {
			if !r.match(p, ch) {
				continue
			}
			*bp = AppendMessage((*bp)[:0], names[Pattern].message, []byte(p), channel, message)
			n += r.deliver(list, *bp)
		}
	}
	return n
}

// PublishShard sends message to the subscribers of the shard channel
// channel as [smessage, channel, message] (SPUBLISH; no pattern is
// matched) and returns how many received it.
func (r *Registry) PublishShard(channel, message []byte) int {
	r.published.Add(1)
	r.mu.RLock()
	defer r.mu.RUnlock()
	list := r.lists[Shard][string(channel)]
	if len(list) == 0 {
		return 0
	}
	bp := r.buf()
	defer r.bufs.Put(bp)
	*bp = AppendMessage((*bp)[:0], names[Shard].message, nil, channel, message)
	return r.deliver(list, *bp)
}

func (r *Registry) buf() *[]byte {
	if bp, _ := r.bufs.Get().(*[]byte); bp != nil {
		return bp
	}
	return new([]byte)
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

// Channels returns the channels (k Channel) or shard channels (k Shard)
// with a subscriber that match (all with match nil), in no order (PUBSUB
// CHANNELS, SHARDCHANNELS).
func (r *Registry) Channels(k Kind, match func(string) bool) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for ch := range r.lists[k] {
		if match == nil || match(ch) {
			out = append(out, ch)
		}
	}
	return out
}

// NumSub is the subscriber count of a channel (k Channel) or shard
// channel (k Shard): PUBSUB NUMSUB, SHARDNUMSUB.
func (r *Registry) NumSub(k Kind, channel string) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.lists[k][channel])
}

// NumPat is the number of patterns with a subscriber (PUBSUB NUMPAT).
func (r *Registry) NumPat() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.lists[Pattern])
}

// Stats returns the registry's counters.
func (r *Registry) Stats() Stats {
	r.mu.RLock()
	st := Stats{Channels: len(r.lists[Channel]), Patterns: len(r.lists[Pattern]), ShardChannels: len(r.lists[Shard])}
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
