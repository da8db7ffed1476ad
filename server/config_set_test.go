package server

import (
	"strings"
	"testing"
)

// TestConfigSet (S35): what Redis's test suite and applications set
// answers as redis-server 7.0 does; a parameter tiercache cannot change
// is refused with the reason and changes nothing; several parameters are
// applied together or not at all.
func TestConfigSet(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	for _, c := range [][]string{
		{"CONFIG", "SET", "hash-max-listpack-entries", "10"},
		{"CONFIG", "GET", "hash-max-listpack-entries"},
		{"CONFIG", "SET", "hash-max-ziplist-value", "1kb"},
		{"CONFIG", "GET", "hash-max-listpack-value"},
		{"CONFIG", "SET", "list-max-listpack-size", "-3"},
		{"CONFIG", "GET", "list-max-ziplist-size"},
		{"CONFIG", "SET", "set-max-intset-entries", "x"},
		{"CONFIG", "SET", "zset-max-listpack-entries", "64", "zset-max-listpack-value", "32"},
		{"CONFIG", "GET", "zset-max-listpack-entries"},
		{"CONFIG", "GET", "zset-max-ziplist-value"},
		{"CONFIG", "SET", "hash-max-listpack-entries", "-1"},
		{"CONFIG", "SET", "busy-reply-threshold", "2000"},
		{"CONFIG", "GET", "lua-time-limit"},
		{"CONFIG", "SET", "lua-time-limit", "6000", "busy-reply-threshold", "7000"}, // a name and its alias: both, in order
		{"CONFIG", "GET", "lua-time-limit"},
		{"CONFIG", "SET", "busy-reply-threshold", "5000", "lua-time-limit", "2000"},
		{"CONFIG", "GET", "busy-reply-threshold"},
		{"CONFIG", "SET", "list-max-listpack-size", "-2", "list-max-ziplist-size", "-3"},
		{"CONFIG", "GET", "list-max-listpack-size"},
		{"CONFIG", "SET", "slowlog-max-len", "30", "SLOWLOG-MAX-LEN", "40"}, // one name twice: refused
		{"CONFIG", "GET", "slowlog-max-len"},
		{"CONFIG", "SET", "lua-time-limit", "x"},
		{"CONFIG", "SET", "busy-reply-threshold", "-1"},
		{"CONFIG", "SET", "busy-reply-threshold", "10000000000000"},
		{"CONFIG", "GET", "busy-reply-threshold"},
		{"CONFIG", "SET", "busy-reply-threshold", "9223372036854775807"},
		{"CONFIG", "GET", "busy-reply-threshold"},
		{"CONFIG", "SET", "busy-reply-threshold", "9223372036854775808"},
		{"CONFIG", "SET", "busy-reply-threshold", "2000"},
		{"CONFIG", "GET", "busy-reply-threshold"},
		{"CONFIG", "SET", "tracking-table-max-keys", "-1"},
		{"CONFIG", "SET", "tracking-table-max-keys", "9223372036854775807"},
		{"CONFIG", "GET", "tracking-table-max-keys"},
		{"CONFIG", "SET", "tracking-table-max-keys", "100"},
		{"CONFIG", "GET", "tracking-table-max-keys"},
		{"CONFIG", "SET", "client-output-buffer-limit", "pubsub 64mb 16mb 30"},
		{"CONFIG", "SET", "client-output-buffer-limit", "pubsub 64mb 16mb"},
		{"CONFIG", "SET", "client-output-buffer-limit", "bogus 1 1 1"},
		{"CONFIG", "SET", "notify-keyspace-events", "Kx"},
		{"CONFIG", "GET", "notify-keyspace-events"},
		{"CONFIG", "SET", "nosuch", "1"},
		{"CONFIG", "SET", "notify-keyspace-events"},
	} {
		p.same(0, c...)
	}
	o := p.ours[0]
	if r := o.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"); !strings.Contains(r, "maxmemory-policy") || !strings.Contains(r, "restart") {
		t.Errorf("CONFIG SET maxmemory-policy: %q, want a refusal with the reason", r)
	}
	// All or nothing: the bad second parameter leaves the first unchanged.
	if r := o.do("CONFIG", "SET", "notify-keyspace-events", "KEA", "tracking-table-max-keys", "x"); !strings.HasPrefix(r, "-ERR CONFIG SET failed") {
		t.Errorf("a CONFIG SET with a bad parameter: %q", r)
	}
	if r := o.do("CONFIG", "GET", "notify-keyspace-events"); !strings.Contains(r, "xK") {
		t.Errorf("notify-keyspace-events changed by a refused CONFIG SET: %q", r)
	}
	if r := o.do("CONFIG", "GET", "client-output-buffer-limit"); !strings.Contains(r, "pubsub 67108864 16777216 30") {
		t.Errorf("client-output-buffer-limit: %q", r)
	}
}

// TestConfigSetValuesAsRedis (S35): sizes are read as Redis's memtoull
// reads them (no sign, a b unit, no overflow), integers keep Redis's
// bounds, and a call's names are checked (unknown, duplicate) before any
// value, with redis-server 7.0's replies; a refused call changes nothing.
func TestConfigSetValuesAsRedis(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	limits := p.ours[0].do("CONFIG", "GET", "client-output-buffer-limit")
	for _, c := range [][]string{
		{"CONFIG", "SET", "hash-max-listpack-value", "-5"},
		{"CONFIG", "SET", "hash-max-listpack-value", "+5"},
		{"CONFIG", "SET", "hash-max-listpack-value", "10000000000gb"},
		{"CONFIG", "SET", "hash-max-listpack-value", "99999999999999999999"},
		{"CONFIG", "SET", "hash-max-listpack-value", "1b"},
		{"CONFIG", "GET", "hash-max-listpack-value"},
		{"CONFIG", "SET", "hash-max-listpack-value", "2KB"},
		{"CONFIG", "GET", "hash-max-listpack-value"},
		{"CONFIG", "SET", "hash-max-listpack-value", ""},
		{"CONFIG", "GET", "hash-max-listpack-value"},
		{"CONFIG", "SET", "list-max-listpack-size", "3000000000"},
		{"CONFIG", "SET", "list-compress-depth", "3000000000"},
		{"CONFIG", "SET", "client-output-buffer-limit", "pubsub -1 1 1"},
		{"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1 1 5x"},
		{"CONFIG", "SET", "Notify-keyspace-events", "K", "NOTIFY-keyspace-events", "K"},
		{"CONFIG", "SET", "save", "", "save", ""},
		{"CONFIG", "SET", "busy-reply-threshold", "x", "nosuch", "1"},
		{"CONFIG", "SET", "busy-reply-threshold", "x", "notify-keyspace-events", "K", "busy-reply-threshold", "1"},
		{"CONFIG", "GET", "notify-keyspace-events"},
	} {
		p.same(0, c...)
	}
	if r := p.ours[0].do("CONFIG", "GET", "client-output-buffer-limit"); r != limits {
		t.Errorf("client-output-buffer-limit changed by refused calls: %q, was %q", r, limits)
	}
}

// TestConfigGetEchoesName (S35): CONFIG GET answers an exact name as it
// was typed, a glob's matches by their own names, and a parameter once,
// under the first pattern that matched it, as redis-server 7.0 does.
func TestConfigGetEchoesName(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	for _, c := range [][]string{
		{"CONFIG", "GET", "NOTIFY-keyspace-events"},
		{"CONFIG", "GET", "Lua-Time-Limit"},
		{"CONFIG", "GET", "notify-keyspace-events", "NOTIFY-KEYSPACE-EVENTS"},
		{"CONFIG", "GET", "NOTIFY-KEYSPACE-EVENTS", "notify*"},
		{"CONFIG", "GET", "notify*", "NOTIFY-KEYSPACE-EVENTS"},
	} {
		p.same(0, c...)
	}
}
