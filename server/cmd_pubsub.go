package server

import (
	"strings"

	"github.com/tiercache/tiercache/pubsub"
)

// Pub/sub commands (SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
// PUBLISH, Redis 7.0's sharded SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, and
// PUBSUB), replying as Redis 7.0's pubsub.c: a subscription change is
// answered per channel with [kind, channel, count], a push in RESP3. The
// registry is package pubsub's; the messages reach a connection through
// its pushQueue (pushes.go). c.subs is the connection's every
// subscription, shard channels included: while it is not 0 a RESP2
// connection is in subscribed mode and of the pubsub output class, as
// Redis's CLIENT_PUBSUB flag.

func newPubSub() *pubsub.Registry { return pubsub.New(pubsub.Options{Match: globMatch}) }

// subscribeCmd: SUBSCRIBE channel..., PSUBSCRIBE pattern..., SSUBSCRIBE
// shardchannel... (as k says).
func (c *conn) subscribeCmd(args [][]byte, k pubsub.Kind) {
	if k == pubsub.Shard && c.inExec {
		c.w.Error(errSSubscribeDenyBlocking)
		return
	}
	q := c.pushes()
	for _, ch := range args[1:] {
		n, total := c.s.ps.Subscribe(q, string(ch), k)
		c.subs.Store(int64(total))
		c.subscription(k.SubscribeReply(), ch, n)
	}
}

// unsubscribeCmd: UNSUBSCRIBE [channel...], PUNSUBSCRIBE [pattern...],
// SUNSUBSCRIBE [shardchannel...]; without arguments every one of its kind
// in the order subscribed, or one reply with a null channel when there
// is none.
func (c *conn) unsubscribeCmd(args [][]byte, k pubsub.Kind) {
	kind := k.UnsubscribeReply()
	names := args[1:]
	if len(names) == 0 {
		own := c.s.ps.Of(c.push)
		for _, n := range own.Of(k) {
			names = append(names, []byte(n))
		}
		if len(names) == 0 {
			c.subscription(kind, nil, own.CountOf(k))
			return
		}
	}
	for _, ch := range names {
		n, total := c.s.ps.Unsubscribe(c.push, string(ch), k)
		c.subs.Store(int64(total))
		if c.push.pending.Load() {
			// a message published before the registry let go of c goes
			// before the answer (TestNoMessageAfterUnsubscribe)
			c.drainPushes()
		}
		c.subscription(kind, ch, n)
	}
}

// subscription writes [kind, channel (null if nil), count].
// It is a push, sent under CLIENT REPLY OFF too, as by redis-server 7.0
// (addReplyPubsubSubscribed and its kin set CLIENT_PUSHING).
func (c *conn) subscription(kind string, ch []byte, n int) {
	defer c.w.Mute(c.w.Mute(false))
	c.w.Push(3)
	c.w.BulkString(kind)
	if ch == nil {
		c.w.Null()
	} else {
		c.w.Bulk(ch)
	}
	c.w.Int(int64(n))
}

// cmdPublish: PUBLISH channel message → how many received it.
func (c *conn) cmdPublish(args [][]byte) { c.published(c.s.ps.Publish(args[1], args[2])) }

// cmdSPublish: SPUBLISH shardchannel message → how many of the shard
// channel's subscribers received it. Like PUBLISH it reaches this
// server's subscribers only: no other sidecar's (the remote tier carries
// keys, not messages).
func (c *conn) cmdSPublish(args [][]byte) { c.published(c.s.ps.PublishShard(args[1], args[2])) }

// published answers a publish that reached n subscribers. A RESP3
// publisher subscribed to its own channel gets the message before the
// answer, as Redis adds it to the client's output during the command
// (a script's connection has no queue).
func (c *conn) published(n int) {
	if q := c.push; q != nil && q.pending.Load() {
		c.drainPushes()
	}
	c.w.Int(int64(n))
}

// pubsubHelp is PUBSUB HELP's text (pubsub.c pubsubCommand).
var pubsubHelp = []string{"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT", "    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding", "    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]", "    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]", "    Return the number of subscribers for the specified shard level channel(s)",
	"HELP", "    Prints this help."}

// cmdPubSub: PUBSUB CHANNELS [pattern] | NUMSUB [channel...] | NUMPAT |
// SHARDCHANNELS [pattern] | SHARDNUMSUB [shardchannel...] | HELP.
func (c *conn) cmdPubSub(args [][]byte) {
	switch sub := strings.ToLower(string(args[1])); {
	case (sub == "channels" || sub == "shardchannels") && len(args) <= 3:
		k := pubsub.Channel
		if sub == "shardchannels" {
			k = pubsub.Shard
		}
		var match func(string) bool
		if len(args) == 3 {
			pat := string(args[2])
			match = func(ch string) bool { return globMatch(pat, ch) }
		}
		chs := c.s.ps.Channels(k, match)
		c.w.Array(len(chs))
		for _, ch := range chs {
			c.w.BulkString(ch)
		}
	case sub == "numsub" || sub == "shardnumsub":
		k := pubsub.Channel
		if sub == "shardnumsub" {
			k = pubsub.Shard
		}
		c.w.Array(2 * (len(args) - 2))
		for _, ch := range args[2:] {
			c.w.Bulk(ch)
			c.w.Int(int64(c.s.ps.NumSub(k, string(ch))))
		}
	case sub == "numpat" && len(args) == 2:
		c.w.Int(int64(c.s.ps.NumPat()))
	case sub == "help" && len(args) == 2:
		c.w.Array(len(pubsubHelp))
		for _, h := range pubsubHelp {
			c.w.Simple(h)
		}
	case sub == "channels" || sub == "shardchannels": // arity -2: more arguments reach pubsubCommand's syntax error
		c.w.Error(errSubcommandSyntax("PUBSUB", args[1]))
	case sub == "numpat" || sub == "help":
		c.wrongArgs("pubsub|" + sub)
	default:
		c.unknownSubcommand("pubsub", args[1])
	}
}

// subscribedOnly reports whether cmd is refused to c: a RESP2 connection
// with subscriptions (shard channels too) runs only the subscription
// commands, PING, QUIT and RESET (server.c processCommand).
func (c *conn) subscribedOnly(cmd *command) bool {
	return c.w.Proto() == 2 && c.subs.Load() > 0 && !cmd.inSubscribed
}

// pingSubscribed: PING on a RESP2 connection with subscriptions answers
// ["pong", message or ""] (pingCommand).
func (c *conn) pingSubscribed(args [][]byte) {
	c.w.Array(2)
	c.w.BulkString("pong")
	if len(args) == 2 {
		c.w.Bulk(args[1])
		return
	}
	c.w.BulkString("")
}
