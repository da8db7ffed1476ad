package server

import "strings"

// replyFlags are CLIENT REPLY's state, Redis's CLIENT_REPLY_OFF,
// CLIENT_REPLY_SKIP_NEXT and CLIENT_REPLY_SKIP (networking.c): replies are
// dropped while replyOff or replySkip is set (the Writer is muted), and
// replySkipNext turns into replySkip once the command that set it ended.
type replyFlags uint8

const (
	replyOff replyFlags = 1 << iota
	replySkipNext
	replySkip
)

// clientReply: CLIENT REPLY ON|OFF|SKIP. ON clears OFF and SKIP and
// answers +OK; OFF and SKIP answer nothing (SKIP does nothing while OFF).
// A push (a message, a subscription's confirmation, an invalidation) is
// still sent, as redis-server 7.0 sends it (CLIENT_PUSHING).
func (c *conn) clientReply(args [][]byte) {
	if len(args) != 3 {
		c.wrongArgs("client|reply")
		return
	}
	switch strings.ToLower(string(args[2])) {
	case "on":
		c.reply &^= replyOff | replySkip
		c.w.Mute(false)
		c.w.OK()
	case "off":
		c.reply |= replyOff
		c.w.Mute(true)
	case "skip":
		if c.reply&replyOff == 0 {
			c.reply |= replySkipNext
		}
	default:
		c.w.Error(errSyntax)
	}
}

// replied ends a command for CLIENT REPLY, as Redis's resetClient after
// each command it processed: a skip ends, and a skip asked for begins.
// The commands of an EXEC are one command here as there.
func (c *conn) replied() {
	c.reply &^= replySkip
	if c.reply&replySkipNext != 0 {
		c.reply = c.reply&^replySkipNext | replySkip
	}
	c.w.Mute(c.reply&(replyOff|replySkip) != 0)
}

// skipping reports whether a command's reply depends on the commands
// before it (CLIENT REPLY SKIP): the pipelined GETs and SETs behind it are
// then not taken together (getRun, setRun), so that each one's reply is
// dropped or sent as dispatch would.
func (c *conn) skipping() bool { return c.reply&(replySkip|replySkipNext) != 0 }
