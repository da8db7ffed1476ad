package server

import "testing"

// TestHelpRepliesMatchRedis: the HELP subcommands of OBJECT, PUBSUB,
// SCRIPT, MEMORY and COMMAND end as redis-server 7.0's do ("Prints this help."),
// and HELP with an argument is an arity error, byte for byte.
func TestHelpRepliesMatchRedis(t *testing.T) {
	p := newPeerPair(t)
	p.same([][]string{
		{"OBJECT", "HELP", "x"},
		{"PUBSUB", "HELP", "x"},
		{"SCRIPT", "HELP", "x"},
		{"MEMORY", "HELP", "x"},
		{"COMMAND", "HELP", "x"},
	})
	for _, cmd := range []string{"OBJECT", "PUBSUB", "SCRIPT", "MEMORY", "COMMAND"} {
		ours, peer := p.do(cmd, "HELP")
		if tail(ours) != tail(peer) {
			t.Errorf("%s HELP ends %q, redis-server's %q", cmd, tail(ours), tail(peer))
		}
	}
}

// tail is a reply's closing HELP entry, as the test connection prints it.
func tail(reply string) string {
	const n = len("+HELP +    Prints this help.]")
	if len(reply) < n {
		return reply
	}
	return reply[len(reply)-n:]
}
