package server

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/resp"
)

// Client-side caching (CLIENT TRACKING), as Redis 7.0's tracking.c: in the
// default mode the keys a tracking client reads are remembered, and the
// first change of one sends it an invalidation and forgets it; in BCAST
// mode every change of a key under one of its prefixes does. An
// invalidation is a RESP3 push ["invalidate", [key...]] (a null for all
// keys after a flush), or, redirected to a RESP2 client subscribed to
// __redis__:invalidate, a message there. Every change invalidates: a
// command's (flushEvents, inside scripts and EXEC too), an expiry, an
// eviction out of the cache, a change another sidecar made through the
// remote tier (events.go), FLUSHALL; a move between tiers does not.

// tracker is the server's tracking table.
type tracker struct {
	s       *Server
	clients atomic.Int64 // connections with tracking on
	mu      sync.Mutex
	// keys: default mode, who read each key. A client is named by its
	// trackState, which lets go of the connection as it closes: the keys
	// it read are forgotten lazily, as Redis's ids, without keeping a
	// closed connection's buffers alive.
	keys  map[string][]*trackState
	items int // the clients of every key in keys, summed (INFO's tracking_total_items)
	// tabled is len(keys), stored under mu after each change, read
	// without it (active).
	tabled atomic.Int64
	bcast  map[*conn]bool // BCAST connections
	// pending holds the BCAST invalidations of the command running now:
	// one message per client, prefix and command, where Redis sends one
	// per client and prefix each event loop cycle (so for a pipelined
	// batch, one after all its replies); flushBcast sends them once it
	// ended.
	pending  map[*conn][]bcastKey
	pendingN atomic.Bool
	evicted  atomic.Uint64 // keys invalidated to keep within tracking-table-max-keys
	sent     atomic.Uint64 // invalidation messages sent
}

// bcastKey is a key to invalidate for a BCAST client, under the prefix of
// the client's that it starts with (a client's prefixes never overlap).
type bcastKey struct{ prefix, key string }

// trackState is a connection's tracking mode: written by its goroutine
// holding tracker.mu, read by others holding it.
type trackState struct {
	c                                *conn // nil once off
	on, bcast, optin, optout, noloop bool
	caching                          bool // CLIENT CACHING for the next command (its goroutine only)
	redirect                         int64
	redir                            *conn
	broken                           bool
	prefixes                         []string
}

func newTracker(s *Server) *tracker {
	return &tracker{s: s, keys: map[string][]*trackState{}, bcast: map[*conn]bool{}}
}

// active reports whether writes must reach the tracker: a client tracks,
// or the table still holds keys read while one did (Redis removes a
// written key from its table whether or not anyone tracks now).
func (t *tracker) active() bool { return t.clients.Load() > 0 || t.tabled.Load() > 0 }

// trackingClient is the connection whose tracking a command's reads and
// writes count for: the script's caller for a script's commands.
func (c *conn) trackingClient() *conn {
	if c.scriptOf != nil {
		return c.scriptOf
	}
	return c
}

// remember notes the keys a read-only command reads, before it reads
// them, for its client in the default mode (trackingRememberKeys): OPTIN
// only after CLIENT CACHING yes, OPTOUT unless CLIENT CACHING no.
//
// A read-only command a script calls makes its caller track the keys the
// script declared (KEYS), not the ones the command names, as Redis 7.0's
// call() remembers the caller's keys (S81).
func (c *conn) remember(cmd *command, args [][]byte) {
	tc := c.trackingClient()
	st := tc.trk
	if st == nil || !st.on || st.bcast || st.optin && !st.caching || st.optout && st.caching {
		return
	}
	var keys [][]byte
	if c.scriptOf != nil {
		if tc.script != nil {
			keys = tc.script.call.Keys
		}
	} else if cmd.name != "eval_ro" && cmd.name != "evalsha_ro" && cmd.name != "fcall_ro" { // tracked by what they call, as Redis's call()
		cmd.eachKey(args, func(k []byte) bool { keys = append(keys, k); return true })
	}
	if len(keys) == 0 {
		return
	}
	t := c.s.trk
	t.mu.Lock()
	for _, key := range keys {
		k := string(key)
		list := t.keys[k]
		if !slices.Contains(list, st) {
			t.keys[k] = append(list, st)
			t.items++
		}
	}
	t.tabled.Store(int64(len(t.keys)))
	t.limitLocked(c.s.conf.trackingMaxKeys.Load())
	t.mu.Unlock()
}

// limit invalidates remembered keys until the table holds at most max (0:
// unbounded), as Redis's trackingLimitUsedSlots does after CONFIG SET
// tracking-table-max-keys (S83).
func (t *tracker) limit(max int64) {
	t.mu.Lock()
	t.limitLocked(max)
	t.mu.Unlock()
}

func (t *tracker) limitLocked(max int64) {
	if over := int64(len(t.keys)) - max; max > 0 && over > 0 {
		t.evictLocked(int(over))
		t.tabled.Store(int64(len(t.keys)))
	}
}

// evictLocked invalidates n remembered keys to keep the table within
// tracking-table-max-keys (trackingLimitUsedSlots): their clients are told,
// as if the keys changed.
func (t *tracker) evictLocked(n int) {
	for k, list := range t.keys {
		if n <= 0 {
			return
		}
		delete(t.keys, k)
		t.items -= len(list)
		t.sendKeyLocked(nil, []byte(k), list, nil)
		t.evicted.Add(1)
		n--
	}
}

// invalidate tells the clients tracking keys that they changed, writer
// (nil for the cache's own removals) having changed them
// (trackingInvalidateKey); BCAST clients get a message for each of their
// prefixes with the keys under it, sorted, without the ones a NOLOOP
// client changed itself.
func (t *tracker) invalidate(writer *conn, keys [][]byte) {
	t.invalidateAs(writer, keys, nil)
}

// invalidateServed invalidates the keys the serve of by's blocking
// command changed: by changed them (NOLOOP), and what the clients served
// (by and those served before it) get of them comes after their replies
// (S90), as redis-server 7.0 serves a blocked client as its current
// client and answers it then (serveClientsBlockedOnListKey,
// trackingInvalidateKey's pending keys).
func (t *tracker) invalidateServed(by *conn, keys [][]byte, served []*conn) {
	t.invalidateAs(by, keys, served)
}

// invalidateAs is invalidate; served: the clients whose invalidations
// follow their replies (invalidateServed).
func (t *tracker) invalidateAs(writer *conn, keys [][]byte, served []*conn) {
	if !t.active() || len(keys) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	bc := t.pending
	for _, key := range keys {
		for c := range t.bcast {
			if c.trk.noloop && c == writer {
				continue
			}
			for _, p := range c.trk.prefixes {
				if bytes.HasPrefix(key, []byte(p)) {
					if bc == nil {
						bc = map[*conn][]bcastKey{}
						t.pending = bc
					}
					bc[c] = append(bc[c], bcastKey{p, string(key)})
					t.pendingN.Store(true)
					break
				}
			}
		}
		if list, ok := t.keys[string(key)]; ok {
			delete(t.keys, string(key))
			t.tabled.Store(int64(len(t.keys)))
			t.items -= len(list)
			t.sendKeyLocked(writer, key, list, served)
		}
	}
	if writer == nil { // the cache's own removals: no command to wait for
		t.flushBcastLocked()
	}
}

// flushBcast sends the BCAST invalidations pending: to each client a
// message for each of its prefixes with keys, in the prefixes' order, the
// keys sorted and once, as Redis 7.0's trackingBroadcastInvalidationMessages
// walks its prefix table (S78).
func (t *tracker) flushBcast() {
	if !t.pendingN.Load() {
		return
	}
	t.mu.Lock()
	t.flushBcastLocked()
	t.mu.Unlock()
}

func (t *tracker) flushBcastLocked() {
	for c, ks := range t.pending {
		slices.SortFunc(ks, func(a, b bcastKey) int {
			if n := strings.Compare(a.prefix, b.prefix); n != 0 {
				return n
			}
			return strings.Compare(a.key, b.key)
		})
		ks = slices.Compact(ks)
		for len(ks) > 0 {
			n := 1
			for n < len(ks) && ks[n].prefix == ks[0].prefix {
				n++
			}
			b := resp.AppendArray(nil, n)
			for _, k := range ks[:n] {
				b = resp.AppendBulk(b, []byte(k.key))
			}
			t.sendLocked(c, b, true) // after a served client's reply: Redis sends them as its event loop cycle ends
			ks = ks[n:]
		}
	}
	t.pending = nil
	t.pendingN.Store(false)
}

// sendKeyLocked sends [key] to each of list still tracking in the default
// mode, but to writer in NOLOOP mode; to the clients served, after their
// replies (S90).
func (t *tracker) sendKeyLocked(writer *conn, key []byte, list []*trackState, served []*conn) {
	var one []byte
	for _, st := range list {
		if !st.on || st.bcast || st.noloop && st.c == writer {
			continue
		}
		if one == nil {
			one = resp.AppendBulk(resp.AppendArray(nil, 1), key)
		}
		t.sendLocked(st.c, one, slices.Contains(served, st.c))
	}
}

// forgetAll empties the table, as every flush does even while no client
// tracks: a client that turns tracking on again would hear of keys it read
// before (S85, trackingInvalidateKeysOnFlush).
func (t *tracker) forgetAll() {
	t.mu.Lock()
	t.forgetLocked()
	t.mu.Unlock()
}

func (t *tracker) forgetLocked() {
	if len(t.keys) > 0 {
		t.keys = map[string][]*trackState{}
		t.items = 0
		t.tabled.Store(0)
	}
}

// invalidateAll tells every tracking client that every key changed (a
// null), and forgets the table (trackingInvalidateKeysOnFlush).
func (t *tracker) invalidateAll() {
	if !t.active() {
		t.forgetAll()
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forgetLocked()
	t.s.mu.Lock()
	conns := make([]*conn, 0, len(t.s.conns))
	for c := range t.s.conns {
		conns = append(conns, c)
	}
	t.s.mu.Unlock()
	for _, c := range conns {
		if st := c.trk; st != nil && st.on {
			null := []byte("$-1\r\n")
			if c.push.resp3.Load() {
				null = []byte("_\r\n")
			}
			t.sendLocked(c, null, false)
		}
	}
}

// sendLocked sends one invalidation, keys being its RESP payload (an
// array of keys, or a null), to c or to the client it redirects to
// (sendTrackingMessage); after: it follows the reply of a blocking
// command served to its recipient and not answered yet (S90).
func (t *tracker) sendLocked(c *conn, keys []byte, after bool) {
	st := c.trk
	dst := c
	if st.redirect != 0 {
		r := st.redir
		if r == nil || r.gone.Load() {
			// each time, as Redis: the client may have read keys since
			// (TestTrackingBrokenRedirectEveryTime)
			if c.push.resp3.Load() {
				b := resp.AppendBulk(resp.AppendArray(nil, 2), []byte("tracking-redir-broken"))
				b = append(b, ':')
				b = strconv.AppendInt(b, st.redirect, 10)
				b = append(b, '\r', '\n')
				c.push.deliver(b[1:], '>')
			}
			st.broken = true
			return
		}
		dst = r
	}
	q := dst.push
	switch {
	case q.resp3.Load():
		b := resp.AppendBulk(resp.AppendArray(nil, 2), []byte("invalidate"))
		b = append(b, keys...)
		if after {
			q.deliverAfterReply(b[1:], '>')
		} else {
			q.deliver(b[1:], '>')
		}
	case st.redirect != 0 && dst.subs.Load() > 0: // itself too (sendTrackingMessage's using_redirection)
		b := resp.AppendArray(nil, 3)
		b = resp.AppendBulk(b, []byte("message"))
		b = resp.AppendBulk(b, []byte(invalidateChannel))
		b = append(b, keys...)
		q.deliver(b, 0) // a subscriber: never blocked
	default:
		return // RESP2 without a subscribed redirect: nowhere to send it
	}
	t.sent.Add(1)
}

// invalidateChannel is where invalidations go for RESP2 clients.
const invalidateChannel = "__redis__:invalidate"

// forget ends c's tracking as it closes or RESETs.
func (t *tracker) forget(c *conn) {
	if c.trk == nil {
		return
	}
	t.mu.Lock()
	t.offLocked(c)
	t.mu.Unlock()
}

// offLocked turns c's tracking off (disableTracking); its remembered keys
// are forgotten lazily, as in Redis.
func (t *tracker) offLocked(c *conn) {
	st := c.trk
	if st.on {
		t.clients.Add(-1)
	}
	delete(t.bcast, c)
	*st = trackState{}
}

// trackingOptions are CLIENT TRACKING's arguments.
type trackingOptions struct {
	on, bcast, optin, optout, noloop bool
	redirect                         int64
	prefixes                         []string
}

// clientTracking: CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]... [BCAST]
// [OPTIN] [OPTOUT] [NOLOOP], with Redis's checks and their order.
func (c *conn) clientTracking(args [][]byte) {
	var o trackingOptions
	for j := 3; j < len(args); j++ {
		more := len(args) - 1 - j
		switch a := strings.ToLower(string(args[j])); {
		case a == "redirect" && more > 0:
			j++
			if o.redirect != 0 {
				c.w.Error(errTrackingOneRedirect)
				return
			}
			id, ok := c.intArg(args[j])
			if !ok {
				return
			}
			if id != c.id && c.s.connByID(id) == nil {
				c.w.Error(errTrackingNoRedirect)
				return
			}
			o.redirect = id
		case a == "bcast":
			o.bcast = true
		case a == "optin":
			o.optin = true
		case a == "optout":
			o.optout = true
		case a == "noloop":
			o.noloop = true
		case a == "prefix" && more > 0:
			j++
			o.prefixes = append(o.prefixes, string(args[j]))
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	t := c.s.trk
	switch strings.ToLower(string(args[2])) {
	case "on":
		o.on = true
	case "off":
		if c.trk != nil {
			t.mu.Lock()
			t.offLocked(c)
			t.mu.Unlock()
		}
		c.w.OK()
		return
	default:
		c.w.Error(errSyntax)
		return
	}
	st := c.trk
	if st == nil {
		st = &trackState{}
	}
	switch {
	case !o.bcast && len(o.prefixes) > 0:
		c.w.Error(errTrackingPrefixNeedsBcast)
		return
	case st.on && st.bcast != o.bcast:
		c.w.Error(errTrackingSwitchBcast)
		return
	case o.bcast && (o.optin || o.optout):
		c.w.Error(errTrackingOptBcast)
		return
	case o.optin && o.optout:
		c.w.Error(errTrackingOptInOut)
		return
	case o.optin && st.optout || o.optout && st.optin:
		c.w.Error(errTrackingSwitchOpt)
		return
	}
	if o.bcast {
		if msg := prefixCollision(st.prefixes, o.prefixes); msg != "" {
			c.w.Error(msg)
			return
		}
	}
	var redir *conn
	if o.redirect != 0 {
		redir = c.s.connByID(o.redirect)
	}
	t.mu.Lock()
	if !st.on {
		t.clients.Add(1)
	}
	prefixes := st.prefixes
	if o.bcast {
		if len(o.prefixes) == 0 && len(prefixes) == 0 {
			o.prefixes = []string{""}
		}
		prefixes = append(prefixes, o.prefixes...)
		t.bcast[c] = true
	}
	*st = trackState{c: c, on: true, bcast: o.bcast, optin: o.optin, optout: o.optout, noloop: o.noloop,
		redirect: o.redirect, redir: redir, prefixes: prefixes}
	c.trk = st
	t.mu.Unlock()
	c.w.OK()
}

// prefixCollision is Redis's refusal of BCAST prefixes one of which
// starts another (checkPrefixCollisionsOrReply), or "".
func prefixCollision(have, add []string) string {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range add {
		for _, h := range have {
			if overlap(h, p) {
				return errPrefixOverlap(p, h, true)
			}
		}
		for _, q := range add[i+1:] {
			if overlap(p, q) {
				return errPrefixOverlap(p, q, false)
			}
		}
	}
	return ""
}

// clientCaching: CLIENT CACHING YES|NO, for the next command.
func (c *conn) clientCaching(args [][]byte) {
	st := c.trk
	if st == nil || !st.on {
		c.w.Error(errCachingNotTracking)
		return
	}
	switch strings.ToLower(string(args[2])) {
	case "yes":
		if !st.optin {
			c.w.Error(errCachingYes)
			return
		}
	case "no":
		if !st.optout {
			c.w.Error(errCachingNo)
			return
		}
	default:
		c.w.Error(errSyntax)
		return
	}
	st.caching = true
	c.w.OK()
}

// clientGetRedir: CLIENT GETREDIR → the redirect id, 0 without one, -1
// when tracking is off.
func (c *conn) clientGetRedir() {
	c.s.trk.mu.Lock()
	defer c.s.trk.mu.Unlock()
	if st := c.trk; st != nil && st.on {
		c.w.Int(st.redirect)
		return
	}
	c.w.Int(-1)
}

// clientTrackingInfo: CLIENT TRACKINGINFO → flags, redirect, prefixes.
func (c *conn) clientTrackingInfo() {
	c.s.trk.mu.Lock()
	defer c.s.trk.mu.Unlock()
	st := c.trk
	if st == nil {
		st = &trackState{}
	}
	flags := []string{"off"}
	if st.on {
		flags[0] = "on"
	}
	if st.bcast {
		flags = append(flags, "bcast")
	}
	if st.optin {
		flags = append(flags, "optin")
		if st.caching {
			flags = append(flags, "caching-yes")
		}
	}
	if st.optout {
		flags = append(flags, "optout")
		if st.caching {
			flags = append(flags, "caching-no")
		}
	}
	if st.noloop {
		flags = append(flags, "noloop")
	}
	if st.broken {
		flags = append(flags, "broken_redirect")
	}
	c.w.Map(3)
	c.w.BulkString("flags")
	c.w.Set(len(flags))
	for _, f := range flags {
		c.w.BulkString(f)
	}
	c.w.BulkString("redirect")
	if st.on {
		c.w.Int(st.redirect)
	} else {
		c.w.Int(-1)
	}
	c.w.BulkString("prefixes")
	ps := slices.Clone(st.prefixes)
	slices.Sort(ps)
	c.w.Array(len(ps))
	for _, p := range ps {
		c.w.BulkString(p)
	}
}

// connByID finds a live connection by its id, or nil.
func (s *Server) connByID(id int64) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.id == id {
			return c
		}
	}
	return nil
}

// clientTrackingCmd: CLIENT TRACKING|CACHING|GETREDIR|TRACKINGINFO with
// their arities.
func (c *conn) clientTrackingCmd(sub string, args [][]byte) {
	switch {
	case sub == "tracking" && len(args) >= 3:
		c.clientTracking(args)
	case sub == "caching" && len(args) == 3:
		c.clientCaching(args)
	case sub == "getredir" && len(args) == 2:
		c.clientGetRedir()
	case sub == "trackinginfo" && len(args) == 2:
		c.clientTrackingInfo()
	default:
		c.wrongArgs("client|" + sub)
	}
}

// prefixesLocked counts the distinct prefixes BCAST clients track (INFO's
// tracking_total_prefixes, Redis's PrefixTable size).
func (t *tracker) prefixesLocked() int {
	seen := map[string]bool{}
	for c := range t.bcast {
		if st := c.trk; st != nil {
			for _, p := range st.prefixes {
				seen[p] = true
			}
		}
	}
	return len(seen)
}
