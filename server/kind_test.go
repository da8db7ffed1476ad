package server

import (
	"testing"

	"github.com/tiercache/tiercache/tier"
)

// TestWrongTypeReplies checks S14: a string command on a key of another
// kind answers Redis's WRONGTYPE error and changes nothing, MGET answers
// nil for it, TYPE names its kind, and SET replaces it with a string.
func TestWrongTypeReplies(t *testing.T) {
	tc := newTierCache(t)
	_, path := startServerWith(t, tc, nil)
	if _, err := tc.Set([]byte("h"), []byte("encoded"), tier.SetOptions{Kind: kindHash}); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, path)
	wrong := "-" + errWrongType
	r.expect([]step{
		{[]string{"TYPE", "h"}, "+hash"},
		{[]string{"GET", "h"}, wrong},
		{[]string{"STRLEN", "h"}, wrong},
		{[]string{"GETDEL", "h"}, wrong},
		{[]string{"GETEX", "h", "EX", "100"}, wrong},
		{[]string{"SET", "h", "v", "GET"}, wrong},
		{[]string{"TTL", "h"}, ":-1"},
		{[]string{"MGET", "h", "nope"}, "*[nil nil]"},
		{[]string{"TYPE", "h"}, "+hash"},
		{[]string{"EXISTS", "h"}, ":1"},
		{[]string{"SET", "h", "v"}, "+OK"},
		{[]string{"TYPE", "h"}, "+string"},
		{[]string{"GET", "h"}, "$v"},
		{[]string{"TYPE", "nope"}, "+none"},
	})
	// Pipelined GETs are answered in batches (S11): the batch answers
	// WRONGTYPE for the key of another kind too.
	if _, err := tc.Set([]byte("h2"), []byte("encoded"), tier.SetOptions{Kind: kindList}); err != nil {
		t.Fatal(err)
	}
	r.send("*2\r\n$3\r\nGET\r\n$1\r\nh\r\n*2\r\n$3\r\nGET\r\n$2\r\nh2\r\n*2\r\n$3\r\nGET\r\n$1\r\nh\r\n")
	for _, want := range []string{"$v", wrong, "$v"} {
		if got := r.reply(); got != want {
			t.Fatalf("pipelined GET: %q, want %q", got, want)
		}
	}
}
