package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSetRunMatchesOneByOne (S52): SETs pipelined behind a SET, taken with
// Reader.NextSet, give byte for byte the replies, and leave the keys,
// key count and command count, of the same stream run through ReadCommand
// and dispatch one by one, for valid SETs and for frames NextSet must
// leave to the general path (options, other arity, limits, malformed and
// partial frames, inline commands), with the stream split at every byte.
func TestSetRunMatchesOneByOne(t *testing.T) {
	big := strings.Repeat("v", 40)
	frames := []string{
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc\r\n",
		"*3\r\n$3\r\nsEt\r\n$1\r\nk\r\n$0\r\n\r\n",
		"*3\r\n$3\r\nset\r\n$2\r\nk2\r\n$4\r\na\r\nb\r\n",
		"*3\r\n$3\r\nSET\r\n$0\r\n\r\n$1\r\nx\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40\r\n" + big + "\r\n",       // over max_value
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$70\r\n" + big + big + "\r\n", // over max_bulk
		"*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nEX\r\n$2\r\n10\r\n",
		"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nNX\r\n",
		"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nw\r\n$3\r\nGET\r\n",
		"*2\r\n$3\r\nSET\r\n$1\r\nk\r\n",
		"*3\r\n$3\r\nSEX\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$03\r\nabc\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabcd\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$-1\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nab",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\n$1\r\nv\r\n",
		"*03\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"SET k inline\r\n",
		"*1\r\n$4\r\nPING\r\n",
	}
	tail := "*3\r\n$3\r\nSET\r\n$2\r\nk3\r\n$2\r\nzz\r\n"
	opts := func(o *Options) { o.MaxBulkBytes, o.MaxValueBytes = 64, 32 }
	for _, f := range frames {
		stream := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nold\r\n" + f + tail
		one, onePath := startServer(t, func(o *Options) { opts(o); o.noSetRun = true })
		run, runPath := startServer(t, opts)
		want := exchangeCut(t, onePath, stream, len(stream))
		wantN := settledCommands(one, 0)
		wantState := setRunState(t, onePath)
		for cut := 0; cut <= len(stream); cut++ {
			n := settledCommands(run, 0)
			if got := exchangeCut(t, runPath, stream, cut); !bytes.Equal(got, want) {
				t.Fatalf("frame %q cut at %d: replies %q, one by one %q", f, cut, got, want)
			}
			if got := settledCommands(run, n+wantN) - n; got != wantN {
				t.Fatalf("frame %q cut at %d: %d commands processed, one by one %d (from %d)", f, cut, got, wantN, n)
			}
		}
		if got := setRunState(t, runPath); got != wantState {
			t.Fatalf("frame %q: state %s, one by one %s", f, got, wantState)
		}
	}
}

// exchangeCut sends stream in two writes cut at cut, a millisecond apart,
// ends the connection's input and returns every byte the server sent.
func exchangeCut(t *testing.T, path, stream string, cut int) []byte {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	for i, part := range []string{stream[:cut], stream[cut:]} {
		if i == 1 {
			time.Sleep(time.Millisecond)
		}
		if _, err := nc.Write([]byte(part)); err != nil {
			break // the server closed on a protocol error: what it wrote is read below
		}
	}
	nc.(*net.UnixConn).CloseWrite()
	out, err := io.ReadAll(nc)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) { // closed with input unread: what came before is read
		t.Fatal(err)
	}
	return out
}

// settledCommands is s's count of commands processed once it reached want
// (a closed connection's count is added as its goroutine ends), or after a
// second.
func settledCommands(s *Server, want uint64) uint64 {
	n := s.Stats().CommandsProcessed
	for deadline := time.Now().Add(time.Second); n < want && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
		n = s.Stats().CommandsProcessed
	}
	return n
}

// setRunState is the values of the keys the streams set and the key count.
func setRunState(t *testing.T, path string) string {
	t.Helper()
	c := dialRaw(t, path)
	var b strings.Builder
	for _, k := range []string{"k", "k2", "k3", ""} {
		c.cmd("GET", k)
		b.WriteString(c.reply() + " ")
	}
	c.cmd("DBSIZE")
	b.WriteString(c.reply())
	c.nc.Close()
	return b.String()
}

// TestSetRunPushesInOrder (S52): a RESP3 client subscribed to its own
// SETs' keyspace events gets each event and reply in the order of the
// SETs one by one when they are pipelined.
func TestSetRunPushesInOrder(t *testing.T) {
	var stream string
	for _, cmd := range [][]string{
		{"HELLO", "3"}, {"CONFIG", "SET", "notify-keyspace-events", "E$"}, {"SUBSCRIBE", "__keyevent@0__:set"},
		{"SET", "a", "1"}, {"SET", "b", "2"}, {"set", "c", "3"}, {"SET", "d", "4"},
	} {
		stream += pipeline(cmd)
	}
	_, onePath := startServer(t, func(o *Options) { o.noSetRun = true })
	_, runPath := startServer(t, nil)
	want := exchangeCut(t, onePath, stream, len(stream))
	if !bytes.Contains(want, []byte("$1\r\nd\r\n")) {
		t.Fatalf("one by one, no event for d: %q", want)
	}
	if got := exchangeCut(t, runPath, stream, len(stream)); !bytes.Equal(got, want) {
		t.Fatalf("pipelined %q, one by one %q", got, want)
	}
}
