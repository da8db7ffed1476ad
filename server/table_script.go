package server

import (
	"slices"

	"github.com/tiercache/tiercache/pubsub"
)

// The commands of issue 33 (scripting, pub/sub, client tracking), kept
// apart from table.go's so that each family's entries sit together.

func scriptCommands() []*command {
	return []*command{
		{name: "eval", arity: -3, flags: []string{"noscript", "stale", "skip_monitor", "may_replicate", "no_mandatory_keys"}, keyNum: 2, lockFree: true, // takes the lock itself
			run: func(c *conn, a [][]byte) { c.evalCmd(a, false, false) }},
		{name: "evalsha", arity: -3, flags: []string{"noscript", "stale", "skip_monitor", "may_replicate", "no_mandatory_keys"}, keyNum: 2, lockFree: true, // takes the lock itself
			run: func(c *conn, a [][]byte) { c.evalCmd(a, true, false) }},
		{name: "eval_ro", arity: -3, flags: []string{"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys"}, keyNum: 2, lockFree: true, // takes the lock itself
			run: func(c *conn, a [][]byte) { c.evalCmd(a, false, true) }},
		{name: "evalsha_ro", arity: -3, flags: []string{"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys"}, keyNum: 2, lockFree: true, // takes the lock itself
			run: func(c *conn, a [][]byte) { c.evalCmd(a, true, true) }},
		{name: "script", arity: -2, flags: []string{"noscript"}, lockFree: true, run: (*conn).cmdScript}, // SCRIPT KILL runs beside a busy script: busyAllowed
		{name: "function", arity: -2, flags: []string{"noscript"}, lockFree: true, run: (*conn).cmdFunction},
		{name: "fcall", arity: -3, flags: []string{"noscript", "stale", "skip_monitor", "may_replicate", "no_mandatory_keys"}, keyNum: 2, lockFree: true, run: (*conn).cmdNoFunctions},
		{name: "subscribe", arity: -2, flags: []string{"pubsub", "noscript", "loading", "stale"}, lockFree: true, run: func(c *conn, a [][]byte) { c.subscribeCmd(a, pubsub.Channel) }},
		{name: "psubscribe", arity: -2, flags: []string{"pubsub", "noscript", "loading", "stale"}, lockFree: true, run: func(c *conn, a [][]byte) { c.subscribeCmd(a, pubsub.Pattern) }},
		{name: "unsubscribe", arity: -1, flags: []string{"pubsub", "noscript", "loading", "stale"}, lockFree: true, run: func(c *conn, a [][]byte) { c.unsubscribeCmd(a, pubsub.Channel) }},
		{name: "punsubscribe", arity: -1, flags: []string{"pubsub", "noscript", "loading", "stale"}, lockFree: true, run: func(c *conn, a [][]byte) { c.unsubscribeCmd(a, pubsub.Pattern) }},
		{name: "publish", arity: 3, flags: []string{"pubsub", "loading", "stale", "fast", "may_replicate"}, lockFree: true, run: (*conn).cmdPublish},
		// Sharded pub/sub (Redis 7.0): the channels are at key positions, as
		// Redis's key specs flagged not_key give them, for the cluster's
		// slot rules; COMMAND GETKEYS names none (notKey).
		{name: "ssubscribe", arity: -2, flags: []string{"pubsub", "noscript", "loading", "stale"}, first: 1, last: -1, step: 1, notKey: true, lockFree: true, run: func(c *conn, a [][]byte) { c.subscribeCmd(a, pubsub.Shard) }},
		{name: "sunsubscribe", arity: -1, flags: []string{"pubsub", "noscript", "loading", "stale"}, first: 1, last: -1, step: 1, notKey: true, lockFree: true, run: func(c *conn, a [][]byte) { c.unsubscribeCmd(a, pubsub.Shard) }},
		{name: "spublish", arity: 3, flags: []string{"pubsub", "loading", "stale", "fast", "may_replicate"}, first: 1, last: 1, step: 1, notKey: true, lockFree: true, run: (*conn).cmdSPublish},
		{name: "pubsub", arity: -2, flags: []string{"pubsub", "loading", "stale"}, lockFree: true, run: (*conn).cmdPubSub},
		{name: "fcall_ro", arity: -3, flags: []string{"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys"}, keyNum: 2, lockFree: true, run: (*conn).cmdNoFunctions},
	}
}

// Commands of table.go that touch no key run without the transaction
// lock, and those Redis 7.0 flags allow_busy run beside a busy script.
var (
	lockFreeCommands  = []string{"auth", "hello", "client", "config"}
	allowBusyCommands = []string{"auth", "hello", "quit"}
)

// subscribedCommands run on a RESP2 connection with subscriptions.
var subscribedCommands = []string{"subscribe", "psubscribe", "unsubscribe", "punsubscribe", "ssubscribe", "sunsubscribe",
	"ping", "quit", "reset"}

// markCommands sets lockFree and allowBusy on table.go's commands.
func markCommands(t map[string]*command) {
	for _, cmd := range t {
		cmd.readonly = slices.Contains(cmd.flags, "readonly")
		cmd.inSubscribed = slices.Contains(subscribedCommands, cmd.name)
	}
	for _, n := range lockFreeCommands {
		if cmd := t[n]; cmd != nil {
			cmd.lockFree = true
		}
	}
	for _, n := range allowBusyCommands {
		if cmd := t[n]; cmd != nil && !cmd.allowBusy {
			cmd.allowBusy = true
			cmd.flags = append(cmd.flags, "allow_busy")
		}
	}
}
