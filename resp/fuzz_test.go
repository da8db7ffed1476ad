package resp

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzReader: any byte stream yields commands or an error, never a panic,
// never an argument longer than the limits, and the same commands whether
// the stream arrives at once or one byte at a time, and whether or not
// buffered GETs and SETs are taken with NextGet and NextSet after each
// command (as a GET's or a SET's run does).
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
		"*01\r\n$4\r\nPING\r\n",
		"*2\r\n$4\r\nECHO\r\n$-0\r\n\r\n",
		"\r\n\r\nPING\r\n*1\r\n$4\r\nPING\r\n",
		"SET k \"\\xff\\n\" \r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$600\r\n" + strings.Repeat("v", 600) + "\r\n",
		"*3\r\n$3\r\nset\r\n$1\r\na\r\n$1\r\n1\r\n*3\r\n$3\r\nSeT\r\n$2\r\nbb\r\n$0\r\n\r\n*3\r\n$3\r\nSET\r\n$0\r\n\r\n$1\r\nx\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*4\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\nNX\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabcd\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$70000\r\n",
		// R11: headers cut at their CR, words as sdssplitargs splits them.
		"*1\r\n\r\r\n",
		"*1\rX$4\r\nPING\r\n",
		"*2\r\n$4\r\nECHO\r\n$" + strings.Repeat("0", 40) + "1\r\nx\r\n",
		"ECHO a'b' c\v\"d\"\f'e'\vf\r\n",
	} {
		f.Add([]byte(s))
	}
	lim := Limits{BufferBytes: 512, MaxBulkBytes: 1 << 16, MaxArgs: 64, MaxInlineBytes: 256, MaxQueryBytes: 1 << 20}
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
		// The commands read, written back as multibulk arrays (how a
		// client sends them), read back the same.
		var re []byte
		for _, flat := range a {
			args := unflatten(flat)
			re = fmt.Appendf(re, "*%d\r\n", len(args))
			for _, arg := range args {
				re = fmt.Appendf(re, "$%d\r\n%s\r\n", len(arg), arg)
			}
		}
		c, errC := collect(iotest.HalfReader(bytes.NewReader(re)), lim, false)
		if errC != nil || len(c) != len(a) {
			t.Fatalf("%d commands re-encoded read back as %d (err %v)", len(a), len(c), errC)
		}
		for i := range a {
			if !bytes.Equal(a[i], c[i]) {
				t.Fatalf("command %d re-encoded reads back as %q, want %q", i, c[i], a[i])
			}
		}
	})
}

// collect reads every command and flattens each to its args as netstrings
// ("<len>:<bytes>"), the command name in lower case. With gets, every command is followed by
// the GETs and SETs NextGet and NextSet take.
func collect(r io.Reader, lim Limits, gets bool) ([][]byte, error) {
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
			flat = appendNetstring(flat, a)
		}
		out = append(out, flat)
		for gets {
			if key, ok := rd.NextGet(); ok {
				if len(key) == 0 || len(key) > lim.MaxBulkBytes {
					return nil, io.ErrShortBuffer
				}
				out = append(out, appendNetstring([]byte("3:get"), key))
				continue
			}
			name, key, val, ok := rd.NextSet()
			if !ok {
				break
			}
			if !bytes.EqualFold(name, []byte("set")) || len(key) == 0 || len(key) > lim.MaxBulkBytes || len(val) > lim.MaxBulkBytes {
				return nil, io.ErrShortBuffer
			}
			out = append(out, appendNetstring(appendNetstring([]byte("3:set"), key), val))
		}
	}
}

func appendNetstring(b, a []byte) []byte {
	return append(fmt.Appendf(b, "%d:", len(a)), a...)
}

// unflatten splits collect's netstrings back into arguments.
func unflatten(flat []byte) [][]byte {
	var args [][]byte
	for len(flat) > 0 {
		i := bytes.IndexByte(flat, ':')
		n, _ := strconv.Atoi(string(flat[:i]))
		args = append(args, flat[i+1:i+1+n])
		flat = flat[i+1+n:]
	}
	return args
}
