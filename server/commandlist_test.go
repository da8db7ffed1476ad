package server

import (
	"slices"
	"testing"
)

// TestCommandListFilterAsRedis is S116: COMMAND LIST's FILTERBY as
// redis-server 7.0's: PATTERN (without case, over full names such as
// config|get) and MODULE (tiercache has none) list the same names, in
// any order, and a misplaced, incomplete or unknown filter is a syntax
// error; ACLCAT is refused, as tiercache has no ACL categories.
func TestCommandListFilterAsRedis(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	for _, args := range [][]string{
		{"FILTERBY", "aclcat"}, {"FILTERBY"}, {"FILTERBY", "nosuch", "x"}, {"x"},
		{"FILTERBY", "pattern", "get", "x"}, {"PATTERN", "get"},
	} {
		p.same(0, append([]string{"COMMAND", "LIST"}, args...)...)
	}
	names := func(raw string) []string {
		var n []string
		for _, e := range parseRESP(t, raw).elems {
			n = append(n, e.raw)
		}
		slices.Sort(n)
		return n
	}
	for _, args := range [][]string{
		{"FILTERBY", "PATTERN", "config|*"}, {"filterby", "pattern", "GET"}, {"FILTERBY", "PATTERN", "zz*"},
		{"FILTERBY", "PATTERN", "l[a-e]*"}, {"FILTERBY", "MODULE", "x"},
	} {
		a := append([]string{"COMMAND", "LIST"}, args...)
		ours, peer := names(p.ours[0].do(a...)), names(p.peer[0].do(a...))
		if !slices.Equal(ours, peer) {
			t.Errorf("%q:\n tiercache    %q\n redis-server %q", a, ours, peer)
		}
	}
	if r := p.ours[0].do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "string"); r != "-"+errNoACLCategories+"\r\n" {
		t.Errorf("COMMAND LIST FILTERBY ACLCAT: %q", r)
	}
}
