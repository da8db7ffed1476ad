package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestFlushAllAsyncSync (S29): FLUSHALL and FLUSHDB take SYNC or ASYNC as Redis
// defines them. Either way the keys are gone for the next command; SYNC
// (and no argument) answers once the background purge freed them, which
// INFO then counts (flush_purged, flush_purging 0); ASYNC answers at once.
// A bad argument answers a syntax error and flushes nothing.
func TestFlushAllAsyncSync(t *testing.T) {
	tc := newTierCache(t)
	_, path := startServerWith(t, tc, nil)
	c := dialRaw(t, path)
	for i := 0; i < 100; i++ {
		c.expect([]step{{[]string{"SET", fmt.Sprint("k", i), "v"}, "+OK"}})
	}
	c.expect([]step{
		{[]string{"FLUSHALL", "NOW"}, "-ERR syntax error"},
		{[]string{"FLUSHALL", "ASYNC", "SYNC"}, "-ERR syntax error"},
		{[]string{"DBSIZE"}, ":100"},
		{[]string{"FLUSHALL", "sync"}, "+OK"},
		{[]string{"DBSIZE"}, ":0"},
		{[]string{"GET", "k1"}, "nil"},
	})
	c.cmd("INFO", "tiers")
	if info := c.reply(); !strings.Contains(info, "flush_purged:100\r\n") || !strings.Contains(info, "flush_purging:0\r\n") ||
		!strings.Contains(info, "flush_purge_pending:0\r\n") {
		t.Fatalf("INFO tiers after FLUSHALL SYNC: %q", info)
	}
	c.expect([]step{
		{[]string{"SET", "x", "1"}, "+OK"},
		{[]string{"SET", "y", "2"}, "+OK"},
		{[]string{"FLUSHDB", "ASYNC"}, "+OK"},
		{[]string{"GET", "x"}, "nil"},
		{[]string{"DBSIZE"}, ":0"},
		{[]string{"SET", "x", "3"}, "+OK"},
		{[]string{"GET", "x"}, "$3"},
		{[]string{"FLUSHALL"}, "+OK"},
		{[]string{"EXISTS", "x", "y"}, ":0"},
	})
	if err := tc.WaitPurge(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := tc.Stats(); s.Purged != 103 || s.Purging || s.PurgePending != 0 {
		t.Fatalf("after three FLUSHALLs: purged %d, purging %v, pending %d", s.Purged, s.Purging, s.PurgePending)
	}
}
