package server

import (
	"bytes"
	"slices"
	"strings"

	"github.com/tiercache/tiercache/remote"
)

// eachKey calls f with each key args names, in order, until f returns
// false: the arguments first..last every step (last -1 is the last
// argument, -2 the one before), Redis's legacy key range, then, for a
// command with keyNum, the keys that follow its numkeys argument. A
// numkeys that is not a positive integer, or names more keys than there
// are arguments, gives no key at all, as Redis's key functions of EVAL and
// ZUNIONSTORE give none for a command that will be refused.
func (cmd *command) eachKey(args [][]byte, f func(key []byte) bool) {
	if cmd.keysOf != nil {
		cmd.keysOf(args, f)
		return
	}
	n := 0
	if cmd.keyNum > 0 {
		if cmd.keyNum >= len(args) {
			return
		}
		v, ok := parseInt(args[cmd.keyNum])
		if !ok || v < 1 || v > int64(len(args)-cmd.keyNum-1) {
			return
		}
		n = int(v)
	}
	if cmd.first > 0 {
		last := cmd.last
		if last < 0 {
			last += len(args)
		}
		step := max(cmd.step, 1)
		for i := cmd.first; i <= last && i < len(args); i += step {
			if !f(args[i]) {
				return
			}
		}
	}
	for _, k := range args[cmd.keyNum+1 : cmd.keyNum+1+n] {
		if !f(k) {
			return
		}
	}
	if cmd.storeKeys != nil {
		cmd.storeKeys(args, f)
	}
}

// sortStoreKeys calls f with SORT's destination, if it names one
// (sortStoreKey).
func sortStoreKeys(args [][]byte, f func(key []byte) bool) {
	if i := sortStoreKey(args); i > 0 {
		f(args[i])
	}
}

// sortStoreKey is the position of SORT's destination, 0 for none, found
// as Redis 7.0's sortGetKeys finds it: LIMIT skips two arguments, GET and
// BY one, and the last STORE followed by an argument names it (STORE
// itself skips nothing).
func sortStoreKey(args [][]byte) int {
	at := 0
	for i := 2; i < len(args); i++ {
		switch sortWord(args[i]) {
		case "LIMIT":
			i += 2
		case "GET", "BY":
			i++
		case "STORE":
			if i+1 < len(args) {
				at = i + 1
			}
		}
	}
	return at
}

// geoStoreKeys returns the finder of GEORADIUS's and
// GEORADIUSBYMEMBER's STORE and STOREDIST destinations, as redis-server
// 7.0's key specs of the two find them: for each keyword in turn, the
// argument after its first occurrence at or after from, none when it is
// the last.
func geoStoreKeys(from int) func(args [][]byte, f func(key []byte) bool) {
	return func(args [][]byte, f func(key []byte) bool) {
		for _, kw := range [2]string{"STORE", "STOREDIST"} {
			for i := from; i < len(args); i++ {
				if !strings.EqualFold(string(args[i]), kw) {
					continue
				}
				if i+1 < len(args) && !f(args[i+1]) {
					return
				}
				break
			}
		}
	}
}

// multiKey reports whether cmd may name more than one key: a command of
// one key is never refused, and its key is not even hashed.
func (cmd *command) multiKey() bool {
	return cmd.keyNum > 0 || cmd.storeKeys != nil || cmd.keysOf != nil || cmd.first > 0 && cmd.first != cmd.last
}

// slotCheck follows the hash slot of the keys it is given, as Redis
// Cluster's getNodeByQuery does: the first key's slot, then each other
// key's, where a second name of the first key is that key (not hashed
// again).
type slotCheck struct {
	first []byte
	slot  uint16
	has   bool
	cross bool // keys of two slots were seen
}

// add takes one key; false once keys of two slots were seen.
func (s *slotCheck) add(key []byte) bool {
	switch {
	case !s.has:
		s.first, s.slot, s.has = key, remote.KeySlot(key), true
	case bytes.Equal(key, s.first):
	case remote.KeySlot(key) != s.slot:
		s.cross = true
	}
	return !s.cross
}

// crossSlot answers CROSSSLOT and reports true when args name keys of
// more than one hash slot, as Redis Cluster refuses them (CL2). Inside
// MULTI the refused command is not queued and EXEC aborts, as Redis's
// flagTransaction makes it.
func (c *conn) crossSlot(cmd *command, args [][]byte) bool {
	if !cmd.multiKey() {
		return false
	}
	var sc slotCheck
	cmd.eachKey(args, func(k []byte) bool { return sc.add(k) })
	if !sc.cross {
		return false
	}
	cmd.stats.rejected.Add(1)
	c.refuseCrossSlot()
	c.tx.fail()
	return true
}

// execCrossSlot refuses the EXEC of tx (taken from the connection) when
// its queued commands name keys of more than one slot between them, each
// alone being of one slot, as Redis Cluster checks EXEC's whole
// transaction before it runs: nothing of it runs, and its keys are
// unwatched (CL2). WATCHed keys are not part of it, as in Redis.
func (c *conn) execCrossSlot(tx *txState) bool {
	var sc slotCheck
	for i, cmd := range tx.cmds {
		cmd.eachKey(tx.args[i], func(k []byte) bool { return sc.add(k) })
		if sc.cross {
			c.unwatch()
			c.refuseCrossSlot()
			return true
		}
	}
	return false
}

func (c *conn) refuseCrossSlot() {
	c.s.stats.crossSlot.Add(1)
	c.w.Error(errCrossSlot)
}

// commandGetKeys answers COMMAND GETKEYS command arg...: the keys the
// command would name, by its key positions (eachKey), as redis-server
// 7.0 answers it; cluster clients (redis-py) ask it for the commands
// whose keys move (COMMAND INFO's movablekeys flag).
func (c *conn) commandGetKeys(args [][]byte) {
	if len(args) < 4 { // COMMAND GETKEYS command key...: redis-server's arity -4
		c.wrongArgs("command|getkeys")
		return
	}
	args = args[2:]
	cmd := c.s.cmds[strings.ToLower(string(args[0]))]
	if cmd != nil {
		cmd = cmd.subcommand(args) // a container's keys are its subcommand's (S88)
	}
	switch {
	case cmd == nil:
		c.w.Error(errGetKeysUnknown)
		return
	case cmd.first == 0 && cmd.keyNum == 0 || cmd.notKey:
		c.w.Error(errGetKeysNone)
		return
	case !cmd.arityOK(len(args)):
		c.w.Error(errGetKeysArity)
		return
	}
	var keys [][]byte
	cmd.eachKey(args, func(k []byte) bool { keys = append(keys, k); return true })
	if len(keys) == 0 && !slices.Contains(cmd.flags, "no_mandatory_keys") {
		c.w.Error(errGetKeysInvalid)
		return
	}
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.Bulk(k)
	}
}
