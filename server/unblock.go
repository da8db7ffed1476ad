package server

import "strings"

// unblockHow is how CLIENT UNBLOCK ends a blocked command's wait.
type unblockHow uint8

const (
	notUnblocked   unblockHow = iota
	unblockTimeout            // answered as its timeout answers (a null array)
	unblockError              // answered -UNBLOCKED
)

// clientUnblock: CLIENT UNBLOCK client-id [TIMEOUT|ERROR], as Redis 7.0's
// clientCommand: the reason is checked before the id, and the answer is 1
// when the client waited in a blocking command (every one here may be
// unblocked: lists and sorted sets, Redis's BLOCKED_LIST and
// BLOCKED_ZSET, and WAIT, BLOCKED_WAIT, which TIMEOUT answers 0), else 0
// (no such client, or not blocked).
func (c *conn) clientUnblock(args [][]byte) {
	switch {
	case len(args) < 3:
		c.wrongArgs("client|unblock")
		return
	case len(args) > 4: // past client|unblock's arity, Redis's subcommand syntax error
		c.w.Error(errSubcommandSyntax("CLIENT", args[1]))
		return
	}
	how := unblockTimeout
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
		case "timeout":
		case "error":
			how = unblockError
		default:
			c.w.Error(errUnblockReason)
			return
		}
	}
	id, ok := parseInt(args[2])
	if !ok {
		c.w.Error(errNotInt)
		return
	}
	o := c.s.connByID(id)
	if o == nil || !c.s.blk.unblock(o, how) {
		c.w.Int(0)
		return
	}
	// The error the unblocked client gets is this command's failure too
	// in Redis 7.0's commandstats (S91).
	c.errElsewhere = how == unblockError
	c.w.Int(1)
}

// unblock ends the wait of the waiter c registered last, if it still
// waits: it leaves the registry and is handed how, under the registry's
// mutex, as a push serving it or its timeout would take it (finish); so
// exactly one of them ends the wait, and a push served after it finds no
// waiter (TestClientUnblockRacesPush).
func (r *blockRegistry) unblock(c *conn, how unblockHow) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := c.waiter; w != nil && !w.done {
		r.finish(w, blockResult{unblocked: how})
		return true
	}
	return false
}
