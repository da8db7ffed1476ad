package server

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReader: any byte stream yields commands or an error, never a panic,
// never an argument longer than the limits, and the same commands whether
// the stream arrives at once or one byte at a time, and whether or not
// buffered GETs are taken with NextGet after each command (as a cold GET's
// batch does).
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\nb\r\n",
		"PING\r\nSET \"a b\" 'c'\r\n",
		"*-1\r\n*0\r\n",
		"*1\r\n$-1\r\n",
		"$5\r\nhello\r\n",
		"*2\r\n$3\r\nGET\r\n$99999999999999999999\r\n",
		"SET \"\\x4",
		"*2\r\n$3\r\nget\r\n$1\r\na\r\n*2\r\n$3\r\nGeT\r\n$2\r\nb\n\r\n*2\r\n$3\r\nGET\r\n$0\r\n\r\n",
		"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$3\r\nabcd\r\n",
	} {
		f.Add([]byte(s))
	}
	lim := ReaderLimits{BufferBytes: 512, MaxBulkBytes: 1 << 16, MaxArgs: 64, MaxInlineBytes: 256, MaxQueryBytes: 1 << 20}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, errA := collect(bytes.NewReader(in), lim, false)
		for _, v := range []struct {
			name string
			r    io.Reader
			gets bool
		}{
			{"byte-wise", iotest.OneByteReader(bytes.NewReader(in)), false},
			{"whole with NextGet", bytes.NewReader(in), true},
			{"byte-wise with NextGet", iotest.OneByteReader(bytes.NewReader(in)), true},
		} {
			b, errB := collect(v.r, lim, v.gets)
			if len(a) != len(b) || (errA == nil) != (errB == nil) {
				t.Fatalf("whole read %d cmds (err %v), %s %d cmds (err %v)", len(a), errA, v.name, len(b), errB)
			}
			for i := range a {
				if !bytes.Equal(a[i], b[i]) {
					t.Fatalf("command %d differs: %q vs %q (%s)", i, a[i], b[i], v.name)
				}
			}
		}
	})
}

// collect reads every command and flattens each to its args joined by 0xff,
// the command name in lower case. With gets, every command is followed by
// the GETs NextGet takes.
func collect(r io.Reader, lim ReaderLimits, gets bool) ([][]byte, error) {
	rd := NewReader(r, lim)
	var out [][]byte
	for {
		args, err := rd.ReadCommand()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		if len(args) == 0 || len(args) > lim.MaxArgs {
			return nil, io.ErrShortBuffer
		}
		var flat []byte
		for i, a := range args {
			if len(a) > lim.MaxBulkBytes {
				return nil, io.ErrShortBuffer
			}
			if i == 0 {
				a = bytes.ToLower(a)
			}
			flat = append(append(flat, a...), 0xff)
		}
		out = append(out, flat)
		for gets {
			key, ok := rd.NextGet()
			if !ok {
				break
			}
			if len(key) == 0 || len(key) > lim.MaxBulkBytes {
				return nil, io.ErrShortBuffer
			}
			out = append(out, append(append([]byte("get\xff"), key...), 0xff))
		}
	}
}
