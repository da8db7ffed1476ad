package resp

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestBulkSharedMatchesBulk: replies written with BulkShared (values kept by
// reference and sent with writev) are byte for byte what Bulk produces, for
// every mix of small and large values, buffer overflows, values larger than
// the buffer and more pieces than one writev takes, over a bytes.Buffer and
// over a real Unix socket.
func TestBulkSharedMatchesBulk(t *testing.T) {
	sinks := map[string]func(t *testing.T) (io.Writer, func() []byte){
		"buffer": func(t *testing.T) (io.Writer, func() []byte) {
			var b bytes.Buffer
			return &b, func() []byte { return b.Bytes() }
		},
		"unix": func(t *testing.T) (io.Writer, func() []byte) {
			a, b, err := socketPair(t)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close(); b.Close() })
			got := make(chan []byte, 1)
			go func() { d, _ := io.ReadAll(b); got <- d }()
			return a, func() []byte { a.Close(); return <-got }
		},
	}
	for name, sink := range sinks {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			out, result := sink(t)
			w := NewWriter(out, 4096)
			var want bytes.Buffer
			ref := NewWriter(&want, 1<<20)
			for i := range 3000 {
				var v []byte
				switch p := r.IntN(10); {
				case p < 4:
					v = make([]byte, r.IntN(GatherMin))
				case p < 9:
					v = make([]byte, GatherMin+r.IntN(3000))
				default:
					v = make([]byte, 4096+r.IntN(10000)) // larger than the buffer
				}
				for j := range v {
					v[j] = byte(i + j)
				}
				w.BulkShared(v)
				ref.Bulk(v)
				if i%7 == 0 {
					w.Int(int64(i))
					ref.Int(int64(i))
				}
				if r.IntN(50) == 0 {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			ref.Flush()
			got := result()
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("stream differs: %d bytes, want %d (first difference at %d)", len(got), want.Len(), firstDiff(got, want.Bytes()))
			}
			if w.Buffered() != 0 {
				t.Fatalf("Buffered() = %d after Flush", w.Buffered())
			}
		})
	}
}

// TestWriterErrorSticky: a failed write is reported by Flush and by every
// later Flush; nothing is written after it.
func TestWriterErrorSticky(t *testing.T) {
	fw := &failWriter{}
	w := NewWriter(fw, 512)
	w.BulkShared(make([]byte, 1000))
	if err := w.Flush(); err == nil {
		t.Fatal("Flush after a failed write returned nil")
	}
	w.OK()
	if err := w.Flush(); err == nil {
		t.Fatal("second Flush returned nil")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk on fire") }

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// socketPair is two ends of a Unix socket connection, its path under
// /tmp (t.TempDir can pass sun_path's 107 bytes).
func socketPair(t *testing.T) (net.Conn, net.Conn, error) {
	dir, err := os.MkdirTemp("/tmp", "resp-")
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() { c, _ := l.Accept(); acc <- c }()
	a, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	return a, <-acc, nil
}

// countingWriter counts the writes that reach it.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

// TestBulkIntoMatchesBulk: a bulk string written with BulkInto (and
// filled by the caller), or with Bulk where BulkInto declines, encodes as
// Bulk does; BulkInto never writes to the stream itself (a cache calls it
// holding a lock) and declines only what does not fit the buffer's room.
func TestBulkIntoMatchesBulk(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var out countingWriter
	w := NewWriter(&out, 4096)
	var want bytes.Buffer
	ref := NewWriter(&want, 1<<20)
	declined := 0
	for i := range 3000 {
		v := make([]byte, r.IntN(6000))
		for j := range v {
			v[j] = byte(i + j)
		}
		before := out.writes
		room := 4096 - w.Buffered()
		b := w.BulkInto(len(v))
		if out.writes != before {
			t.Fatal("BulkInto wrote to the stream")
		}
		if b != nil {
			copy(b, v)
		} else {
			if len(v)+len(strconv.Itoa(len(v)))+5 <= room {
				t.Fatalf("BulkInto(%d) declined with %d bytes of room", len(v), room)
			}
			declined++
			w.Bulk(v)
		}
		ref.Bulk(v)
		if r.IntN(20) == 0 {
			w.Flush()
		}
	}
	w.Flush()
	ref.Flush()
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Fatalf("stream differs at %d", firstDiff(out.Bytes(), want.Bytes()))
	}
	if declined == 0 || declined == 3000 {
		t.Fatalf("BulkInto declined %d of 3000: the test needs both paths", declined)
	}
}

// TestWriterDetach: Detach hands back what was written since the last
// Flush without writing it, and refuses when a value is held by reference
// (then Flush writes everything, in order).
func TestWriterDetach(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, 4096)
	w.OK()
	w.Int(7)
	if b, ok := w.Detach(); !ok || string(b) != "+OK\r\n:7\r\n" {
		t.Fatalf("Detach: %q %v", b, ok)
	}
	w.Int(8)
	if b, ok := w.Detach(); !ok || string(b) != ":8\r\n" {
		t.Fatalf("second Detach: %q %v", b, ok)
	}
	big := bytes.Repeat([]byte("x"), GatherMin)
	w.OK()
	w.BulkShared(big)
	if _, ok := w.Detach(); ok {
		t.Fatal("Detach with a value held by reference")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "+OK\r\n$512\r\n" + string(big) + "\r\n"; out.String() != want {
		t.Fatalf("written %q, want %q", out.String(), want)
	}
}

// TestWriterMute (R9): while muted no method adds a byte, what was
// buffered before is still flushed, and errors still count.
func TestWriterMute(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, 64)
	counted := 0
	w.CountError = func(string) { counted++ }
	w.OK()
	if was := w.Mute(true); was {
		t.Fatal("a new Writer is muted")
	}
	big := bytes.Repeat([]byte("x"), 4*GatherMin) // larger than the buffer: written through unless muted
	w.Simple("PONG")
	w.Int(1)
	w.Bulk(big)
	w.BulkString("s")
	w.BulkShared(big)
	w.Null()
	w.NullArray()
	w.Array(2)
	w.Map(1)
	w.Set(1)
	w.Verbatim("txt", "v")
	w.Push(3)
	w.Raw([]byte("+raw\r\n"))
	w.Bool(true)
	w.Double(1.5)
	w.BigNumber("1")
	w.Error("ERR muted")
	if b := w.BulkInto(3); b != nil {
		t.Fatalf("BulkInto while muted: %q", b)
	}
	if w.Errors() != 1 || counted != 1 {
		t.Fatalf("errors %d, counted %d: want 1, 1", w.Errors(), counted)
	}
	if was := w.Mute(false); !was {
		t.Fatal("Mute(false) did not report the muted Writer")
	}
	w.Int(2)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "+OK\r\n:2\r\n" {
		t.Fatalf("written %q, want +OK and :2 only", out.String())
	}
}
