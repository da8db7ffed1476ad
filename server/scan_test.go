package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestScanAndKeys: SCAN's and KEYS's replies and errors, and a whole SCAN
// in small steps returning every key once.
func TestScanAndKeys(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialRaw(t, path)
	for i := 1; i <= 25; i++ {
		c.cmd("SET", fmt.Sprint("user:", i), "v")
		c.reply()
	}
	for i := 1; i <= 5; i++ {
		c.cmd("SET", fmt.Sprint("item:", i), "v")
		c.reply()
	}
	// The keys come in the directory's order: compared sorted.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"KEYS", "item:*"}, "*[$item:1 $item:2 $item:3 $item:4 $item:5]"},
		{[]string{"KEYS", "user:2?"}, "*[$user:20 $user:21 $user:22 $user:23 $user:24 $user:25]"},
		{[]string{"SCAN", "0", "MATCH", "item:[2-3]", "COUNT", "1000"}, "*[$0 *[$item:2 $item:3]]"},
	} {
		c.cmd(tc.args...)
		if got := sortedReply(c.reply()); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
	c.expect([]step{
		{[]string{"KEYS", "nothing*"}, "*[]"},
		{[]string{"scan", "0", "count", "1000", "type", "STRING", "match", "item:1"}, "*[$0 *[$item:1]]"},
		{[]string{"SCAN", "0", "COUNT", "1000", "TYPE", "hash"}, "*[$0 *[]]"},
		{[]string{"SCAN", "x"}, "-ERR invalid cursor"},
		{[]string{"SCAN", "-1"}, "*[$0 *[]]"}, // 2^64-1, as strtoul reads it
		{[]string{"SCAN", "0", "COUNT", "0"}, "-ERR syntax error"},
		{[]string{"SCAN", "0", "COUNT", "+1"}, "-ERR value is not an integer or out of range"},
		{[]string{"SCAN", "0", "COUNT", "many"}, "-ERR value is not an integer or out of range"},
		{[]string{"SCAN", "0", "MATCH"}, "-ERR syntax error"},
		{[]string{"SCAN", "0", "ORDER", "asc"}, "-ERR syntax error"},
		{[]string{"SCAN", "0", "TYPE", "blob"}, "-ERR unknown type name 'blob'"},
		{[]string{"SCAN"}, "-ERR wrong number of arguments for 'scan' command"},
		{[]string{"KEYS"}, "-ERR wrong number of arguments for 'keys' command"},
		{[]string{"PING"}, "+PONG"},
	})
	seen := map[string]int{}
	cursor := "0"
	for steps := 0; ; steps++ {
		c.cmd("SCAN", cursor, "COUNT", "4")
		r := c.reply() // "*[$<cursor> *[$k1 $k2 ...]]"
		head, body, ok := strings.Cut(strings.TrimPrefix(r, "*[$"), " *[")
		if !ok || steps > 30 {
			t.Fatalf("SCAN reply %q after %d steps", r, steps)
		}
		for _, k := range strings.Fields(strings.TrimSuffix(body, "]]")) {
			seen[strings.TrimPrefix(k, "$")]++
		}
		if cursor = head; cursor == "0" {
			break
		}
	}
	if len(seen) != 30 {
		t.Fatalf("a whole SCAN returned %d keys, want 30: %v", len(seen), seen)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s returned %d times", k, n)
		}
	}
}

// sortedReply is an array reply (of keys, or a SCAN's cursor and keys)
// with its bulk strings sorted.
func sortedReply(r string) string {
	prefix, body := "*[", r
	if strings.HasPrefix(r, "*[$") && strings.Contains(r, " *[") { // SCAN: "*[$cursor *[$k ...]]"
		i := strings.Index(r, " *[")
		prefix, body = r[:i+3], r[i+1:len(r)-1]
	}
	keys := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(body, "*["), "]"))
	slices.Sort(keys)
	return prefix + strings.Join(keys, " ") + "]" + strings.Repeat("]", strings.Count(prefix, "["))[1:]
}
