package server

import (
	"strings"
	"testing"
)

// TestMoveSwapDBMatchRedis checks S120: MOVE and SWAPDB answer as a
// redis-server 7.0 started with `databases 1`, in RESP2 and RESP3, and a
// refused MOVE leaves its key, its value and its TTL as they were.
func TestMoveSwapDBMatchRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := newPeers(t, 1, proto, nil, "--databases", "1")
		for _, c := range []string{
			"SET k v EX 1000", "RPUSH l a b",
			"MOVE k 0", "MOVE k 1", "MOVE k -1", "MOVE k 16", "MOVE k x", "MOVE k 00", "MOVE k 99999999999",
			"MOVE nosuch 0", "MOVE nosuch 1", "MOVE l 1", "MOVE k", "MOVE k 0 1",
			"SWAPDB 0 0", "SWAPDB 0 1", "SWAPDB 1 0", "SWAPDB 1 1", "SWAPDB -1 0", "SWAPDB x 0", "SWAPDB 0 x",
			"SWAPDB x y", "SWAPDB 99999999999 0", "SWAPDB 0 99999999999", "SWAPDB 00 0", "SWAPDB 0", "SWAPDB 0 0 0",
			"MULTI", "MOVE k 1", "SWAPDB 0 0", "EXEC",
			"GET k", "TTL k", "LRANGE l 0 -1", "DBSIZE",
		} {
			p.same(0, strings.Fields(c)...)
		}
	}
}
