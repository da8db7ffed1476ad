package server

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestShardedPubSubMatchesRedis (S58): SSUBSCRIBE, SUNSUBSCRIBE,
// SPUBLISH and PUBSUB SHARDCHANNELS and SHARDNUMSUB answer, and the
// messages arrive, byte for byte as redis-server 7.0's, in RESP2 and
// RESP3: the counts of ssubscribe replies are the shard channels alone,
// SPUBLISH reaches no SUBSCRIBE or PSUBSCRIBE subscriber and PUBLISH no
// SSUBSCRIBE one, a RESP2 connection with only shard channels left is
// still in subscribed mode, SUNSUBSCRIBE without arguments, MULTI (SSUBSCRIBE
// refused inside EXEC), scripts, COMMAND GETKEYS, CLIENT LIST's fields and
// INFO's pubsubshard_channels.
func TestShardedPubSubMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			// 0 subscribes to shard channels, a channel and a pattern of
			// the same names, 1 to the channel x and every pattern, 2 to
			// the shard channel x; 3 publishes.
			p := newPeers(t, 4, proto, nil)
			p.same(0, "SSUBSCRIBE", "x", "x", "y")
			p.sameRead(0, pushWait, "second ssubscribe reply (x again)")
			p.sameRead(0, pushWait, "third ssubscribe reply")
			p.same(0, "SUBSCRIBE", "x")
			p.same(0, "PSUBSCRIBE", "x*")
			p.same(0, "SSUBSCRIBE", "z")
			p.same(1, "SUBSCRIBE", "x")
			p.same(1, "PSUBSCRIBE", "*")
			p.same(2, "SSUBSCRIBE", "x")

			p.same(3, "SPUBLISH", "x", "hi")
			p.sameRead(0, pushWait, "smessage")
			p.sameRead(2, pushWait, "smessage")
			p.events(1, "no smessage for a channel or pattern subscriber")
			p.same(3, "PUBLISH", "x", "m2")
			p.sameRead(0, pushWait, "message")
			p.sameRead(0, pushWait, "pmessage")
			p.sameRead(1, pushWait, "message")
			p.sameRead(1, pushWait, "pmessage")
			p.events(2, "no message for a shard channel subscriber")
			p.same(3, "SPUBLISH", "nobody", "m")
			p.same(3, "SPUBLISH", "X", "case matters")
			p.same(3, "PUBLISH", "z", "no shard subscriber")
			p.events(0, "only the pattern's message")
			// A RESP3 publisher subscribed to what it publishes gets its
			// messages before the answer: inside EXEC's array, before a
			// script's answer, as Redis 7.0 sends them (RESP2: refused).
			for _, args := range [][]string{{"SPUBLISH", "y", "own"}, {"PUBLISH", "x", "own"}, {"MULTI"},
				{"SPUBLISH", "y", "in exec"}, {"PUBLISH", "x", "in exec"}, {"EXEC"},
				{"EVAL", "redis.call('spublish', 'y', 'lua'); return redis.call('publish', 'x', 'lua')", "0"}} {
				p.ours[0].send(args...)
				p.peer[0].send(args...)
			}
			p.events(0, "publishing to itself: every reply and message")
			p.events(1, "the channel's and pattern's messages of those")

			p.same(3, "PUBSUB", "SHARDNUMSUB", "x", "y", "q", "z")
			p.same(3, "PUBSUB", "shardnumsub")
			p.same(3, "PUBSUB", "SHARDCHANNELS", "y")
			p.same(3, "PUBSUB", "SHARDCHANNELS", "[yz]*z")
			p.same(3, "PUBSUB", "SHARDCHANNELS", "nomatch*")
			p.same(3, "PUBSUB", "ShardChannels", "a", "b")
			p.same(3, "PUBSUB", "NUMSUB", "x", "y")
			p.same(3, "PUBSUB", "CHANNELS", "y")
			p.same(3, "PUBSUB", "NUMPAT")
			p.same(3, "PUBSUB", "HELP")
			p.same(3, "COMMAND", "GETKEYS", "ssubscribe", "a", "b")
			p.same(3, "COMMAND", "GETKEYS", "sunsubscribe", "a")
			p.same(3, "COMMAND", "GETKEYS", "spublish", "a", "m")
			p.same(3, "COMMAND", "GETKEYS", "spublish", "a")
			p.same(3, "SSUBSCRIBE")
			p.same(3, "SPUBLISH", "x")
			p.same(3, "SPUBLISH", "x", "m", "extra")
			o, r := p.ours[3].do("INFO", "stats"), p.peer[3].do("INFO", "stats")
			if got, want := lineWith(o, "pubsubshard_channels:"), lineWith(r, "pubsubshard_channels:"); got != want || got == "" {
				t.Errorf("INFO stats: %q, redis-server %q", got, want)
			}
			sameClientFields(t, p, 3, 2)

			// Inside MULTI: SPUBLISH and SUNSUBSCRIBE run in EXEC, SSUBSCRIBE
			// is refused there (a DENY BLOCKING client).
			p.same(3, "MULTI")
			p.same(3, "SPUBLISH", "x", "in exec")
			p.same(3, "SSUBSCRIBE", "q")
			p.same(3, "SUNSUBSCRIBE", "q")
			p.same(3, "SUNSUBSCRIBE")
			p.same(3, "EXEC")
			p.sameRead(2, pushWait, "smessage from EXEC")
			p.same(3, "PUBSUB", "SHARDNUMSUB", "q")
			// Scripts: SPUBLISH as redis.call allows it, not in a read-only
			// script; SSUBSCRIBE and SUNSUBSCRIBE are noscript.
			p.same(3, "EVAL", "return redis.call('spublish', 'x', 'from lua')", "0")
			p.sameRead(2, pushWait, "smessage from a script")
			p.same(3, "EVAL", "return redis.call('ssubscribe', 'x')", "0")
			p.same(3, "EVAL", "return redis.call('sunsubscribe')", "0")
			p.same(3, "EVAL", "return redis.call('pubsub', 'shardnumsub', 'x')", "0")
			p.same(3, "EVAL_RO", "return redis.call('spublish', 'x', 'ro')", "0")
			p.same(3, "EVAL", "return redis.pcall('spublish', 'x')", "0")
			p.events(2, "nothing from the refused scripts")

			// Leaving: the counts of each kind, and RESP2's subscribed mode
			// while any shard channel is left.
			p.same(0, "SUNSUBSCRIBE", "x")
			p.same(0, "SUNSUBSCRIBE", "never")
			p.same(0, "UNSUBSCRIBE")
			p.same(0, "PUNSUBSCRIBE")
			p.same(0, "UNSUBSCRIBE")
			p.same(0, "GET", "k")
			p.same(0, "SPUBLISH", "y", "m")
			p.events(0, "RESP3: SPUBLISH's answer after its message")
			p.same(0, "PING")
			p.same(0, "PING", "hi")
			p.same(0, "SUNSUBSCRIBE", "y")
			p.same(0, "SUNSUBSCRIBE") // z, the last: Redis's order of several is its dict's
			p.same(0, "SUNSUBSCRIBE")
			p.same(0, "GET", "k")
			p.same(0, "SUNSUBSCRIBE", "nothing")
			p.same(0, "PING")
			p.same(3, "SPUBLISH", "z", "after")
			p.same(3, "PUBSUB", "SHARDNUMSUB", "x", "y", "z")
			p.events(0, "nothing after SUNSUBSCRIBE")
			p.same(2, "SUNSUBSCRIBE")
			p.same(2, "PING")
			p.same(3, "PUBSUB", "SHARDCHANNELS")

			// RESET leaves the shard channels too, without a notification.
			p.same(2, "SSUBSCRIBE", "r")
			p.same(2, "RESET")
			p.same(2, "PUBSUB", "SHARDNUMSUB", "r")
			p.same(2, "GET", "k")
			// Under CLIENT REPLY OFF the ssubscribe and sunsubscribe replies
			// and the smessages still go out, as pushes (Redis's
			// pubsubshard.tcl "PubSubShard with CLIENT REPLY OFF").
			p.ours[3].send("CLIENT", "REPLY", "OFF")
			p.peer[3].send("CLIENT", "REPLY", "OFF")
			p.same(3, "SSUBSCRIBE", "r")
			p.same(2, "SPUBLISH", "r", "muted")
			p.sameRead(3, pushWait, "smessage under CLIENT REPLY OFF")
			p.same(3, "SUNSUBSCRIBE", "r")
			p.same(3, "CLIENT", "REPLY", "ON")
		})
	}
}

// sameClientFields checks, with CLIENT LIST TYPE pubsub on connection i,
// that connection sub's line has redis-server's flags and sub, psub and
// ssub counts (the ids differ: the line is found by its ssub).
func sameClientFields(t *testing.T, p *peers, i, sub int) {
	t.Helper()
	fields := func(reply string) [][]string {
		_, body, _ := strings.Cut(reply, "\r\n") // the raw bulk's (or verbatim string's) length
		var out [][]string
		for _, f := range clientLines(t, strings.TrimPrefix(strings.TrimSuffix(body, "\r\n"), "txt:")) {
			out = append(out, []string{f["flags"], f["sub"], f["psub"], f["ssub"]})
		}
		slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
		return out
	}
	o, r := fields(p.ours[i].do("CLIENT", "LIST", "TYPE", "pubsub")), fields(p.peer[i].do("CLIENT", "LIST", "TYPE", "pubsub"))
	if !slices.EqualFunc(o, r, slices.Equal) || len(o) != 3 {
		t.Errorf("CLIENT LIST TYPE pubsub flags, sub, psub, ssub: tiercache %q, redis-server %q", o, r)
	}
}

// TestShardedPubSubClusterMatchesRedis (S58, CL2): in cluster mode
// SSUBSCRIBE and SUNSUBSCRIBE of channels of two slots, and an EXEC of
// SPUBLISHes to two slots, answer CROSSSLOT as a redis-server 7.0 in
// cluster mode that owns every slot does (a shard channel hashes as a
// key: hash tags too), while channels of one slot, and of several slots
// over separate SSUBSCRIBEs, are taken; a script's SPUBLISH follows the
// script's slot; in RESP2 and RESP3.
func TestShardedPubSubClusterMatchesRedis(t *testing.T) {
	_, rsock, _, _ := startRedisClusterAt(t)
	_, osock, _ := startClusterServer(t, nil)
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			p := &peers{t: t}
			for range 2 {
				o, r := dialPeer(t, osock), dialPeer(t, rsock)
				if proto == 3 {
					o.do("HELLO", "3")
					r.do("HELLO", "3")
				}
				p.ours, p.peer = append(p.ours, o), append(p.peer, r)
			}
			// b (3300), f (3168); {b}x is b's slot.
			p.same(0, "SSUBSCRIBE", "b", "f")
			p.same(0, "SSUBSCRIBE", "b", "{b}x")
			p.sameRead(0, pushWait, "second ssubscribe reply")
			p.same(0, "SUNSUBSCRIBE", "b", "f")
			p.same(0, "SSUBSCRIBE", "f")
			p.same(1, "SPUBLISH", "f", "m")
			p.sameRead(0, pushWait, "smessage of f")
			p.same(1, "SPUBLISH", "{b}x", "m")
			p.sameRead(0, pushWait, "smessage of {b}x")
			p.same(0, "SUNSUBSCRIBE", "f")
			p.same(0, "SUNSUBSCRIBE", "b", "{b}x")
			p.sameRead(0, pushWait, "second sunsubscribe reply")
			p.same(0, "SUNSUBSCRIBE")
			p.same(0, "SSUBSCRIBE", "f", "{f}")
			p.sameRead(0, pushWait, "second ssubscribe reply")
			p.same(0, "SUNSUBSCRIBE", "f", "{f}")
			p.sameRead(0, pushWait, "second sunsubscribe reply")

			p.same(1, "MULTI")
			p.same(1, "SPUBLISH", "b", "m")
			p.same(1, "SPUBLISH", "f", "m")
			p.same(1, "EXEC")
			p.same(1, "MULTI")
			p.same(1, "SSUBSCRIBE", "b", "f")
			p.same(1, "EXEC")
			p.same(1, "MULTI")
			p.same(1, "SPUBLISH", "b", "m")
			p.same(1, "GET", "{b}x")
			p.same(1, "EXEC")
			p.same(1, "COMMAND", "GETKEYS", "ssubscribe", "b", "f")
			p.same(1, "EVAL", "return redis.call('spublish', 'f', 'm')", "1", "b")
			p.same(1, "EVAL", "#!lua\nreturn redis.call('spublish', 'f', 'm')", "1", "b")
			p.same(1, "EVAL", "#!lua\nreturn redis.call('spublish', '{b}x', 'm')", "1", "b")
			p.same(1, "EVAL", "#!lua\nredis.call('spublish', 'f', 'm'); return redis.call('set', 'b', '1')", "0")
			p.same(1, "PUBSUB", "SHARDNUMSUB", "b", "f")
		})
	}
}

// TestPubSubCommandInfoMatchesRedis (S58): COMMAND INFO of the pub/sub
// commands, sharded ones included, gives redis-server 7.0's arity, flags
// (may_replicate hidden, as Redis hides it) and key positions.
func TestPubSubCommandInfoMatchesRedis(t *testing.T) {
	p := newPeerPair(t)
	for _, name := range []string{"subscribe", "psubscribe", "unsubscribe", "punsubscribe", "publish",
		"ssubscribe", "sunsubscribe", "spublish", "eval"} {
		o, r := p.do("COMMAND", "INFO", name)
		om, rm := commandInfoRE.FindStringSubmatch(o), commandInfoRE.FindStringSubmatch(r)
		if om == nil || rm == nil {
			t.Fatalf("COMMAND INFO %s: tiercache %q, redis-server %q", name, o, r)
		}
		of, rf := strings.Fields(om[3]), strings.Fields(rm[3])
		slices.Sort(of)
		slices.Sort(rf)
		if !slices.Equal(om[1:3], rm[1:3]) || !slices.Equal(of, rf) || !slices.Equal(om[4:], rm[4:]) {
			t.Errorf("COMMAND INFO %s:\n tiercache    %q\n redis-server %q", name, om[1:], rm[1:])
		}
	}
}
