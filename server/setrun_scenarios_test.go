package server

import (
	"bytes"
	"strings"
	"testing"
)

// TestSetRunScenarios (S52): pipelined SETs give the replies and pushes,
// to their own connection and to another one, of the same streams run one
// by one, with tracking (default, BCAST, OPTIN, OPTOUT, NOLOOP, to itself
// and to another client), WATCH (its own and another connection's),
// MULTI/EXEC, keyspace events, AUTH and mixed-case names around them.
func TestSetRunScenarios(t *testing.T) {
	sets := func(keys ...string) [][]string {
		var out [][]string
		for i, k := range keys {
			name := []string{"SET", "set", "SeT"}[i%3]
			out = append(out, []string{name, k, "v" + k})
		}
		return out
	}
	cat := func(parts ...[][]string) [][]string {
		var out [][]string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	type scenario struct {
		name      string
		other     [][]string // the observing connection's commands before
		stream    [][]string // the pipelined connection's stream
		otherThen [][]string // the observing connection's commands after
		auth      bool
	}
	scs := []scenario{
		{name: "tracking self", stream: cat([][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "ON"}, {"GET", "a"}, {"GET", "b"}}, sets("a", "b", "c"), [][]string{{"GET", "a"}}, sets("a", "c", "a"))},
		{name: "tracking noloop", stream: cat([][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "ON", "NOLOOP"}, {"GET", "a"}, {"GET", "b"}}, sets("a", "b", "c"))},
		{name: "tracking bcast", stream: cat([][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"}}, sets("a1", "b", "a2", "a3"))},
		{name: "tracking optin", stream: cat([][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "ON", "OPTIN"}, {"CLIENT", "CACHING", "YES"}, {"GET", "a"}, {"GET", "b"}, {"CLIENT", "CACHING", "YES"}}, sets("a", "b", "a"), [][]string{{"CLIENT", "CACHING", "YES"}, {"GET", "b"}}, sets("b", "b"))},
		{name: "tracking optout", stream: cat([][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "ON", "OPTOUT"}, {"GET", "a"}, {"CLIENT", "CACHING", "NO"}, {"GET", "b"}}, sets("a", "b", "a"))},
		{name: "tracking other", other: [][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "ON"}, {"GET", "a"}, {"GET", "b"}, {"GET", "c"}},
			stream: sets("x", "a", "b", "y", "c", "a"), otherThen: [][]string{{"PING"}}},
		{name: "bcast other", other: [][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "ON", "BCAST"}},
			stream: sets("x", "a", "b", "y", "c", "a"), otherThen: [][]string{{"PING"}}},
		{name: "watch other", other: [][]string{{"WATCH", "c"}},
			stream: sets("a", "b", "c"), otherThen: [][]string{{"MULTI"}, {"GET", "c"}, {"EXEC"}}},
		{name: "watch own", stream: cat([][]string{{"WATCH", "c"}}, sets("a", "b", "c", "d"), [][]string{{"MULTI"}, {"GET", "c"}, {"EXEC"}})},
		{name: "multi", stream: cat(sets("z"), [][]string{{"MULTI"}}, sets("a", "b", "c"), [][]string{{"EXEC"}}, sets("d", "e"), [][]string{{"MULTI"}}, sets("f", "g"), [][]string{{"DISCARD"}}, sets("h", "i"))},
		{name: "events other", other: [][]string{{"CONFIG", "SET", "notify-keyspace-events", "KEA"}, {"PSUBSCRIBE", "__key*"}},
			stream: sets("a", "b", "c", "d"), otherThen: [][]string{{"PING"}}},
		{name: "auth", auth: true, stream: cat(sets("a", "b"), [][]string{{"AUTH", "pw"}}, sets("c", "d", "e"), [][]string{{"GET", "d"}})},
		{name: "other commands", stream: cat(sets("a", "b"), [][]string{{"GET", "a"}, {"DBSIZE"}}, sets("c", "d"), [][]string{{"SETEX", "x", "10", "y"}, {"SETNX", "y", "1"}}, sets("e"), [][]string{{"SET"}, {"SET", "f"}}, sets("g", "h"), [][]string{{"QUIT"}}, sets("i", "j"))},
	}
	for _, sc := range scs {
		t.Run(sc.name, func(t *testing.T) {
			run := func(noSetRun bool) (string, string) {
				_, path := startServer(t, func(o *Options) {
					o.noSetRun = noSetRun
					if sc.auth {
						o.RequirePass, o.UnixRequireAuth = "pw", true
					}
				})
				other := dialRaw(t, path)
				if sc.auth {
					other.send(pipeline([]string{"AUTH", "pw"}))
					readUntil(t, other, "+OK\r\n")
				}
				if len(sc.other) > 0 {
					other.send(pipeline(sc.other...) + pipeline([]string{"PING", "start"}))
					readUntil(t, other, "start\r\n")
				}
				stream := pipeline(sc.stream...)
				got := exchangeCut(t, path, stream, len(stream))
				var b strings.Builder
				if len(sc.otherThen) > 0 {
					other.send(pipeline(sc.otherThen...) + pipeline([]string{"PING", "end"}))
					b.Write(readUntil(t, other, "end\r\n"))
				}
				return string(got), b.String()
			}
			want, wantOther := run(true)
			got, gotOther := run(false)
			if got != want {
				t.Errorf("pipelined:\n%q\none by one:\n%q", got, want)
			}
			if gotOther != wantOther {
				t.Errorf("other connection, pipelined:\n%q\none by one:\n%q", gotOther, wantOther)
			}
		})
	}
}

// readUntil reads r's raw bytes until they end with tail.
func readUntil(t *testing.T, r *rawConn, tail string) []byte {
	t.Helper()
	var out []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(out, []byte(tail)) {
		n, err := r.nc.Read(buf)
		if err != nil {
			t.Fatalf("read after %q: %v", out, err)
		}
		out = append(out, buf[:n]...)
	}
	return out
}
