package server

import (
	"strings"

	"github.com/tiercache/tiercache/pubsub"
)

// Pub/sub commands (SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
// PUBLISH, PUBSUB), replying as Redis 7.0's pubsub.c: a subscription
// change is answered per channel with [kind, channel, count], a push in
// RESP3. The registry is package pubsub's; the messages reach a
// connection through its pushQueue (pushes.go).

func newPubSub() *pubsub.Registry { return pubsub.New(pubsub.Options{Match: globMatch}) }

// subscribeCmd: SUBSCRIBE channel... (pattern false), PSUBSCRIBE
// pattern... (true).
func (c *conn) subscribeCmd(args [][]byte, pattern bool) {
	q := c.pushes()
	kind := "subscribe"
	if pattern {
		kind = "psubscribe"
	}
	for _, ch := range args[1:] {
		c.subs.Store(int64(c.s.ps.Subscribe(q, string(ch), pattern)))
		c.subscription(kind, ch, c.subs.Load())
	}
}

// unsubscribeCmd: UNSUBSCRIBE [channel...], PUNSUBSCRIBE [pattern...];
// without arguments every channel (pattern) in the order subscribed, or
// one reply with a null channel when there is none.
func (c *conn) unsubscribeCmd(args [][]byte, pattern bool) {
	kind := "unsubscribe"
	if pattern {
		kind = "punsubscribe"
	}
	names := args[1:]
	if len(names) == 0 {
		own := c.s.ps.Of(c.push)
		list := own.Channels
		if pattern {
			list = own.Patterns
		}
		for _, n := range list {
			names = append(names, []byte(n))
		}
	}
	if len(names) == 0 {
		c.subscription(kind, nil, c.subs.Load())
		return
	}
	for _, ch := range names {
		c.subs.Store(int64(c.s.ps.Unsubscribe(c.push, string(ch), pattern)))
		if c.push.pending.Load() {
			// a message published before the registry let go of c goes
			// before the answer (TestNoMessageAfterUnsubscribe)
			c.drainPushes()
		}
		c.subscription(kind, ch, c.subs.Load())
	}
}

// subscription writes [kind, channel (null if nil), count].
// It is a push, sent under CLIENT REPLY OFF too, as by redis-server 7.0
// (addReplyPubsubSubscribed and its kin set CLIENT_PUSHING).
func (c *conn) subscription(kind string, ch []byte, n int64) {
	defer c.w.Mute(c.w.Mute(false))
	c.w.Push(3)
	c.w.BulkString(kind)
	if ch == nil {
		c.w.Null()
	} else {
		c.w.Bulk(ch)
	}
	c.w.Int(n)
}

// cmdPublish: PUBLISH channel message → how many received it.
func (c *conn) cmdPublish(args [][]byte) { c.w.Int(int64(c.s.ps.Publish(args[1], args[2]))) }

// cmdPubSub: PUBSUB CHANNELS [pattern] | NUMSUB [channel...] | NUMPAT | HELP.
func (c *conn) cmdPubSub(args [][]byte) {
	switch sub := strings.ToLower(string(args[1])); {
	case sub == "channels" && len(args) <= 3:
		var match func(string) bool
		if len(args) == 3 {
			pat := string(args[2])
			match = func(ch string) bool { return globMatch(pat, ch) }
		}
		chs := c.s.ps.Channels(match)
		c.w.Array(len(chs))
		for _, ch := range chs {
			c.w.BulkString(ch)
		}
	case sub == "numsub":
		c.w.Array(2 * (len(args) - 2))
		for _, ch := range args[2:] {
			c.w.Bulk(ch)
			c.w.Int(int64(c.s.ps.NumSub(string(ch))))
		}
	case sub == "numpat" && len(args) == 2:
		c.w.Int(int64(c.s.ps.NumPat()))
	case sub == "help" && len(args) == 2:
		help := []string{"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
			"NUMPAT", "    Return number of subscriptions to patterns.",
			"NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding", "    pattern subscriptions(default: no channels).",
			"HELP", "    Prints this help."}
		c.w.Array(len(help))
		for _, h := range help {
			c.w.Simple(h)
		}
	case sub == "channels": // its arity is -2: more arguments reach pubsubCommand's syntax error
		c.w.Error(errSubcommandSyntax("PUBSUB", args[1]))
	case sub == "numpat" || sub == "help":
		c.wrongArgs("pubsub|" + sub)
	default:
		c.unknownSubcommand("pubsub", args[1])
	}
}

// subscribedOnly reports whether cmd is refused to c: a RESP2 connection
// with subscriptions runs only the subscription commands, PING and QUIT.
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
