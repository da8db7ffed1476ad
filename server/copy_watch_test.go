package server

import "testing"

// TestCopyWatchMatchesRedis checks S119: COPY touches for WATCH its
// destination, and only when it copied, as redis-server 7.0 (a
// transaction watching the source runs; one watching a destination COPY
// wrote fails; one watching a destination COPY left alone runs), from
// another connection and from a script.
func TestCopyWatchMatchesRedis(t *testing.T) {
	p := newPeers(t, 2, 2, nil)
	p.same(0, "SET", "k", "1")
	p.same(0, "RPUSH", "l", "a", "b")
	for _, tc := range [][]string{
		{"k", "COPY", "k", "k2"},                                 // the source: unchanged
		{"k2", "COPY", "k", "k2"},                                // k2 exists, no REPLACE: nothing copied
		{"k2", "COPY", "k", "k2", "REPLACE"},                     // written
		{"l", "COPY", "l", "l2", "REPLACE"},                      // a list source
		{"k", "EVAL", "return redis.call('copy','k','k4')", "0"}, // from a script
		{"k4", "EVAL", "return redis.call('copy','k','k4','replace')", "0"},
	} {
		p.same(1, "WATCH", tc[0])
		p.same(0, tc[1:]...)
		p.same(1, "MULTI")
		p.same(1, "PING")
		p.same(1, "EXEC")
	}
}
