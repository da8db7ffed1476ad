package server

import (
	"strconv"
	"strings"
	"testing"
)

// TestMemoryMatchesRedis is S49: MEMORY's arguments are read as
// redis-server 7.0 reads them, byte for byte in every error and in the
// nil of an absent key (checked before the key is looked up); USAGE of a
// key answers a positive size on both, a long value's larger than a
// short one's.
func TestMemoryMatchesRedis(t *testing.T) {
	p := newPeerPair(t)
	p.same([][]string{
		{"SET", "k", "v"},
		{"SET", "big", strings.Repeat("x", 10000)},
		{"HSET", "h", "a", "1"},
		{"MEMORY"},
		{"MEMORY", "USAGE"},
		{"memory", "usage", "nokey"},
		{"MEMORY", "USAGE", "k", "SAMPLES"},
		{"MEMORY", "USAGE", "k", "SAMPLES", "-1"},
		{"MEMORY", "USAGE", "k", "SAMPLES", "abc"},
		{"MEMORY", "USAGE", "k", "SAMPLES", "99999999999999999999"},
		{"MEMORY", "USAGE", "k", "FOO", "1"},
		{"MEMORY", "USAGE", "k", "SAMPLES", "5", "extra"},
		{"MEMORY", "USAGE", "nokey", "SAMPLES", "-1"},
		{"MEMORY", "USAGE", "nokey", "samples", "0", "SAMPLES", "3"},
		{"MEMORY", "HELP", "x"},
		{"MEMORY", "foo"},
		{"MEMORY", "foo", "bar"},
		{"MEMORY", "PURGE"},
		{"MEMORY", "PURGE", "x"},
		{"MEMORY", "MALLOC-STATS", "x"},
	})
	size := func(who, reply string) int {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n"))
		if !strings.HasPrefix(reply, ":") || err != nil || n <= 0 {
			t.Fatalf("%s: MEMORY USAGE answered %q", who, reply)
		}
		return n
	}
	for _, args := range [][]string{{"MEMORY", "USAGE", "k"}, {"MEMORY", "USAGE", "h", "SAMPLES", "0"}} {
		ours, peer := p.do(args...)
		size("tiercache", ours)
		size("redis-server", peer)
	}
	ours, peer := p.do("MEMORY", "USAGE", "big")
	oursK, peerK := p.do("MEMORY", "USAGE", "k")
	if size("tiercache", ours) <= size("tiercache", oursK) || size("redis-server", peer) <= size("redis-server", peerK) {
		t.Fatalf("a 10,000-byte value: tiercache %q, redis-server %q; a 1-byte one: %q, %q", ours, peer, oursK, peerK)
	}
}
