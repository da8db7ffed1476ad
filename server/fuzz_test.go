package server

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReader: any byte stream yields commands or an error, never a panic,
// never an argument longer than the limits, and the same commands whether
// the stream arrives at once or one byte at a time.
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
	} {
		f.Add([]byte(s))
	}
	lim := ReaderLimits{BufferBytes: 512, MaxBulkBytes: 1 << 16, MaxArgs: 64, MaxInlineBytes: 256, MaxQueryBytes: 1 << 20}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, errA := collect(bytes.NewReader(in), lim)
		b, errB := collect(iotest.OneByteReader(bytes.NewReader(in)), lim)
		if len(a) != len(b) || (errA == nil) != (errB == nil) {
			t.Fatalf("whole read %d cmds (err %v), byte-wise %d cmds (err %v)", len(a), errA, len(b), errB)
		}
		for i := range a {
			if !bytes.Equal(a[i], b[i]) {
				t.Fatalf("command %d differs: %q vs %q", i, a[i], b[i])
			}
		}
	})
}

// collect reads every command and flattens each to its args joined by 0xff.
func collect(r io.Reader, lim ReaderLimits) ([][]byte, error) {
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
		for _, a := range args {
			if len(a) > lim.MaxBulkBytes {
				return nil, io.ErrShortBuffer
			}
			flat = append(append(flat, a...), 0xff)
		}
		out = append(out, flat)
	}
}
