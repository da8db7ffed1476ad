package server

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// TestListWrongType checks S14 for every list command: on a key of
// another kind each answers WRONGTYPE and changes nothing.
func TestListWrongType(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), nil)
	r := dialRaw(t, path)
	wrong := "-" + errWrongType
	r.expect([]step{{[]string{"SET", "s", "v"}, "+OK"}, {[]string{"RPUSH", "l", "a"}, ":1"}})
	for _, args := range [][]string{
		{"LPUSH", "s", "x"}, {"RPUSH", "s", "x"}, {"LPUSHX", "s", "x"}, {"RPUSHX", "s", "x"},
		{"LPOP", "s"}, {"RPOP", "s", "2"}, {"LRANGE", "s", "0", "-1"}, {"LLEN", "s"},
		{"LINDEX", "s", "0"}, {"LSET", "s", "0", "x"}, {"LINSERT", "s", "BEFORE", "a", "b"},
		{"LREM", "s", "0", "a"}, {"LTRIM", "s", "0", "1"}, {"LPOS", "s", "a"},
		{"LMOVE", "s", "l", "LEFT", "LEFT"}, {"LMOVE", "l", "s", "LEFT", "LEFT"},
		{"RPOPLPUSH", "s", "l"}, {"RPOPLPUSH", "l", "s"},
		{"BLPOP", "s", "0"}, {"BRPOP", "s", "0"}, {"BLMOVE", "s", "l", "LEFT", "LEFT", "0"},
		{"BLMOVE", "l", "s", "LEFT", "LEFT", "0"}, {"BRPOPLPUSH", "l", "s", "0"},
	} {
		r.expect([]step{{args, wrong}})
	}
	r.expect([]step{
		{[]string{"GET", "s"}, "$v"},
		{[]string{"LRANGE", "l", "0", "-1"}, "*[$a]"},
		{[]string{"GET", "l"}, wrong},
		{[]string{"TYPE", "l"}, "+list"},
	})
}

// TestLPosRankRange: LPOS refuses a RANK whose negation does not fit
// (-2^63), as Redis 7.2 does, and answers from the tail for -2^63+1.
func TestLPosRankRange(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), nil)
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"RPUSH", "l", "a", "b", "a", "a"}, ":4"},
		{[]string{"LPOS", "l", "a", "RANK", "-9223372036854775808", "COUNT", "3"},
			"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"},
		{[]string{"LPOS", "l", "a", "RANK", "-9223372036854775807", "COUNT", "3"}, "*[]"},
		{[]string{"LPOS", "l", "a", "RANK", "-1", "COUNT", "3"}, "*[:3 :2 :0]"},
	})
}

// TestListLimits checks S22's limits: a push past MaxListElements or past
// MaxValueBytes is refused with a clear error before the value is built,
// and changes nothing.
func TestListLimits(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), func(o *Options) {
		o.MaxListElements = 4
		o.MaxValueBytes = 64
	})
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"RPUSH", "l", "a", "b", "c"}, ":3"},
		{[]string{"RPUSH", "l", "d", "e"}, "-ERR list would have 5 elements, the limit (server.max_list_elements) is 4"},
		{[]string{"LINSERT", "l", "AFTER", "a", "x"}, ":4"},
		{[]string{"LINSERT", "l", "AFTER", "a", "y"}, "-ERR list would have 5 elements, the limit (server.max_list_elements) is 4"},
		{[]string{"LSET", "l", "0", string(make([]byte, 70))}, "-ERR list would take 79 bytes, the limit (max_value) is 64"},
		{[]string{"LRANGE", "l", "0", "-1"}, "*[$a $x $b $c]"},
		{[]string{"RPUSH", "m", "1"}, ":1"},
		{[]string{"RPUSH", "m", "2", "3", "4", "5"}, "-ERR list would have 5 elements, the limit (server.max_list_elements) is 4"},
		{[]string{"LLEN", "m"}, ":1"},
	})
}

// TestListKeepsTTL checks that a list write keeps the key's expiry and that
// emptying a list removes the key (S22).
func TestListKeepsTTL(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), nil)
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"RPUSH", "l", "a", "b", "c"}, ":3"},
		{[]string{"EXPIRE", "l", "1000"}, ":1"},
		{[]string{"LPUSH", "l", "z"}, ":4"},
		{[]string{"LPOP", "l"}, "$z"},
		{[]string{"LSET", "l", "0", "A"}, "+OK"},
		{[]string{"LTRIM", "l", "0", "1"}, "+OK"},
		{[]string{"LMOVE", "l", "l", "LEFT", "RIGHT"}, "$A"},
		{[]string{"LRANGE", "l", "0", "-1"}, "*[$b $A]"},
	})
	r.cmd("TTL", "l")
	if ttl, err := strconv.Atoi(r.reply()[1:]); err != nil || ttl < 990 || ttl > 1000 {
		t.Errorf("TTL after the writes: %d, %v", ttl, err)
	}
	r.expect([]step{
		{[]string{"RPOP", "l", "5"}, "*[$A $b]"},
		{[]string{"EXISTS", "l"}, ":0"},
		{[]string{"RPUSH", "l", "n"}, ":1"},
		{[]string{"TTL", "l"}, ":-1"},
		{[]string{"LREM", "l", "0", "n"}, ":1"},
		{[]string{"EXISTS", "l"}, ":0"},
	})
}

// TestListConcurrentPush checks that pushes from several connections at
// once lose nothing: the list holds every element, each once, and each
// connection's elements in the order it pushed them.
func TestListConcurrentPush(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), nil)
	const conns, each = 6, 200
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		r := dialRaw(t, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				r.cmd("RPUSH", "l", fmt.Sprintf("%d:%d", i, j))
				if got := r.reply(); got[0] != ':' {
					t.Errorf("RPUSH: %q", got)
					return
				}
			}
		}()
	}
	wg.Wait()
	ec := dialExact(t, path)
	if got := ec.do("LLEN", "l"); got != fmt.Sprintf(":%d\r\n", conns*each) {
		t.Fatalf("LLEN %q, want %d", got, conns*each)
	}
	r := dialRaw(t, path)
	r.cmd("LRANGE", "l", "0", "-1")
	all := r.reply()
	next := make([]int, conns)
	for _, f := range splitReply(all) {
		var i, j int
		if _, err := fmt.Sscanf(f, "$%d:%d", &i, &j); err != nil || j != next[i] {
			t.Fatalf("element %q out of order (next of %d is %d)", f, i, next[i])
		}
		next[i]++
	}
}

// splitReply splits a rendered flat array "*[a b]" into its elements.
func splitReply(s string) []string {
	var out []string
	cur := ""
	for _, c := range s[2 : len(s)-1] {
		if c == ' ' {
			out = append(out, cur)
			cur = ""
			continue
		}
		cur += string(c)
	}
	return append(out, cur)
}
