package server

import (
	"bytes"
	"strings"

	"github.com/tiercache/tiercache/tier"
)

// Keyspace notifications (notify-keyspace-events), as Redis 7.0's
// notify.c: each change a command makes is an event of a class; with the
// class on, it is published on __keyspace@0__:<key> (K, the event as the
// message) and __keyevent@0__:<event> (E, the key as the message). The
// events of each command are notify_events.go's.

// The classes, Redis's flag values (server.h NOTIFY_*).
const (
	notifyKeyspace uint32 = 1 << 0 // K
	notifyKeyevent uint32 = 1 << 1 // E
	notifyGeneric  uint32 = 1 << 2 // g
	notifyString   uint32 = 1 << 3 // $
	notifyList     uint32 = 1 << 4 // l
	notifySet      uint32 = 1 << 5 // s
	notifyHash     uint32 = 1 << 6 // h
	notifyZset     uint32 = 1 << 7 // z
	notifyExpired  uint32 = 1 << 8 // x
	notifyEvicted  uint32 = 1 << 9 // e
	notifyStream   uint32 = 1 << 10
	notifyKeyMiss  uint32 = 1 << 11 // m, not in A
	notifyModule   uint32 = 1 << 13 // d
	notifyNew      uint32 = 1 << 14 // n, not in A
	notifyAll             = notifyGeneric | notifyString | notifyList | notifySet | notifyHash | notifyZset |
		notifyExpired | notifyEvicted | notifyStream | notifyModule
)

var notifyLetters = []struct {
	c    byte
	flag uint32
}{
	{'g', notifyGeneric}, {'$', notifyString}, {'l', notifyList}, {'s', notifySet}, {'h', notifyHash},
	{'z', notifyZset}, {'x', notifyExpired}, {'e', notifyEvicted}, {'t', notifyStream}, {'d', notifyModule},
	{'n', notifyNew}, {'K', notifyKeyspace}, {'E', notifyKeyevent}, {'m', notifyKeyMiss},
}

// parseNotifyFlags reads class letters (keyspaceEventsStringToFlags);
// false for a letter that is no class.
// NotifyKeyspaceEventsValid says whether s is a notify-keyspace-events
// value Options.NotifyKeyspaceEvents takes.
func NotifyKeyspaceEventsValid(s string) bool {
	_, ok := parseNotifyFlags(s)
	return ok
}

func parseNotifyFlags(s string) (uint32, bool) {
	var f uint32
	for i := 0; i < len(s); i++ {
		if s[i] == 'A' {
			f |= notifyAll
			continue
		}
		found := false
		for _, l := range notifyLetters {
			if l.c == s[i] {
				f |= l.flag
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
	return f, true
}

// formatNotifyFlags writes flags as CONFIG GET shows them
// (keyspaceEventsFlagsToString): A for all the classes it covers, then
// K, E and m.
func formatNotifyFlags(f uint32) string {
	var sb strings.Builder
	if f&notifyAll == notifyAll {
		sb.WriteByte('A')
	} else {
		for _, l := range notifyLetters[:11] {
			if f&l.flag != 0 {
				sb.WriteByte(l.c)
			}
		}
	}
	for _, l := range notifyLetters[11:] {
		if f&l.flag != 0 {
			sb.WriteByte(l.c)
		}
	}
	return sb.String()
}

// keyHooks reports whether a write must be followed by its events: some
// class is published, or some client tracks keys.
func (s *Server) keyHooks() bool {
	return s.conf.notify.Load()&(notifyKeyspace|notifyKeyevent) != 0 || s.trk.active()
}

// publishEvent publishes one event of class on key, if its class is on
// (notifyKeyspaceEvent).
func (s *Server) publishEvent(class uint32, event string, key []byte) {
	f := s.conf.notify.Load()
	if f&class == 0 || f&(notifyKeyspace|notifyKeyevent) == 0 {
		return
	}
	if f&notifyKeyspace != 0 {
		s.ps.Publish(append([]byte("__keyspace@0__:"), key...), []byte(event))
	}
	if f&notifyKeyevent != 0 {
		s.ps.Publish([]byte("__keyevent@0__:"+event), key)
	}
}

// emit records that the running command changed key with event: the
// event is published and the key's trackers invalidated after the
// command (flushEvents).
func (c *conn) emit(class uint32, event string, key []byte) {
	c.emitNew(key)
	c.events = append(c.events, keyEvent{class: class, name: event, key: key, by: c.servedTo})
}

// emitNew emits "new" for key if the running command created it, once:
// before the key's first event, as Redis's dbAdd.
func (c *conn) emitNew(key []byte) {
	for i, k := range c.newKeys {
		if bytes.Equal(k, key) {
			c.events = append(c.events, keyEvent{class: notifyNew, name: "new", key: key, by: c.servedTo})
			c.newKeys = append(c.newKeys[:i], c.newKeys[i+1:]...)
			return
		}
	}
}

type keyEvent struct {
	class uint32
	name  string
	key   []byte
	by    *conn // the blocked client whose serve changed key (servedEvents), or nil
}

// flushEvents publishes the running command's events in order and
// invalidates the keys they changed for the clients tracking them.
func (c *conn) flushEvents() {
	if len(c.events) == 0 {
		return
	}
	s := c.s
	keys := c.evKeys[:0]
	var by *conn // whose serve changed keys (nil: the command's own changes)
	served := c.evServed[:0]
	for _, ev := range c.events {
		if ev.class != 0 {
			s.publishEvent(ev.class, ev.name, ev.key)
		}
		if ev.name == "keymiss" {
			continue
		}
		if ev.by != by {
			c.invalidateBy(by, keys, served)
			keys, by = keys[:0], ev.by
			served = append(served, by) // the serves' events come in the order served
		}
		keys = append(keys, ev.key)
	}
	c.invalidateBy(by, keys, served)
	clear(served)
	c.evServed = served[:0]
	clear(c.events)
	c.events = c.events[:0]
	clear(keys)
	c.evKeys = keys[:0]
}

// invalidateBy invalidates keys the running command changed (by nil)
// or that the serve of by's blocking command changed: those are by's own
// writes (NOLOOP), and reach the clients served (served: by and those
// before it) after their replies, as in redis-server 7.0, which serves
// each blocked client after the write, as its current client, and
// answers it then (S90).
func (c *conn) invalidateBy(by *conn, keys [][]byte, served []*conn) {
	if by == nil && c.scriptOf != nil {
		// a script's writes: its caller hears of its own keys after the
		// script's reply (runScript holds its pushes), as Redis 7.0 keeps
		// the current client's invalidations pending until it answered
		c.s.trk.invalidateAs(c.scriptOf, keys, []*conn{c.scriptOf})
		return
	}
	if by == nil {
		c.s.trk.invalidate(c.trackingClient(), keys)
		return
	}
	c.s.trk.invalidateServed(by, keys, served)
}

// tierRemoval is the cache's OnRemoval hook: expired and evicted keys are
// counted (INFO's expired_keys and evicted_keys, whether or not anyone
// listens), published and invalidated, keys another sidecar changed
// invalidated, a resync invalidates every key. It runs under a tier lock:
// it hands the key to the events goroutine (events.go) and never blocks.
func (s *Server) tierRemoval(key []byte, why tier.Removal) {
	switch why {
	case tier.Expired:
		s.stats.expired.Add(1)
		if s.conf.notify.Load()&notifyExpired == 0 && !s.trk.active() {
			return
		}
	case tier.Evicted:
		s.stats.evicted.Add(1)
		if s.conf.notify.Load()&notifyEvicted == 0 && !s.trk.active() {
			return
		}
	default:
		if !s.trk.active() {
			return
		}
	}
	s.evq.put(key, why)
}
