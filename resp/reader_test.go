package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, in string, lim Limits, oneByte bool) ([]string, error) {
	t.Helper()
	var src io.Reader = strings.NewReader(in)
	if oneByte {
		src = iotest.OneByteReader(src)
	}
	rd := NewReader(src, lim)
	var out []string
	for {
		args, err := rd.ReadCommand()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		var parts []string
		for _, a := range args {
			parts = append(parts, string(a))
		}
		out = append(out, strings.Join(parts, "|"))
	}
}

func TestReaderCommands(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	tests := []struct {
		name string
		in   string
		want []string
		err  string // substring of a protocol error; "" = none
	}{
		{"ping", "*1\r\n$4\r\nPING\r\n", []string{"PING"}, ""},
		{"pipeline", "*2\r\n$3\r\nGET\r\n$1\r\na\r\n*1\r\n$4\r\nPING\r\n", []string{"GET|a", "PING"}, ""},
		{"binary", "*2\r\n$4\r\nECHO\r\n$5\r\na\r\n\x00b\r\n", []string{"ECHO|a\r\n\x00b"}, ""},
		{"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{"ECHO|"}, ""},
		{"empty arrays skipped", "*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", []string{"PING"}, ""},
		{"big bulk", "*2\r\n$4\r\nECHO\r\n$204800\r\n" + big + "\r\n*1\r\n$4\r\nPING\r\n", []string{"ECHO|" + big, "PING"}, ""},
		{"inline", "PING\r\nSET k  v\n\r\n", []string{"PING", "SET|k|v"}, ""},
		{"many empty lines", strings.Repeat("\r\n", 100000) + "PING\r\n", []string{"PING"}, ""},
		{"inline quotes", "SET \"a b\" 'c\\'d' \"\\x41\\n\"\r\n", []string{"SET|a b|c'd|A\n"}, ""},
		{"inline unbalanced", "SET \"a b\r\n", nil, "unbalanced quotes"},
		{"inline too big", strings.Repeat("a", 70<<10), nil, "too big inline request"},
		{"negative bulk", "*1\r\n$-5\r\n", nil, "invalid bulk length"},
		{"huge bulk", "*1\r\n$99999999999\r\n", nil, "invalid bulk length"},
		{"nonnumeric bulk", "*1\r\n$abc\r\n", nil, "invalid bulk length"},
		{"nonnumeric mbulk", "*x\r\n", nil, "invalid multibulk length"},
		{"too many args", "*2000\r\n", nil, "invalid multibulk length"},
		// Lengths as redis-server's string2ll reads them: a leading zero,
		// "-0" and a plus sign are protocol errors, not numbers.
		{"leading zero mbulk", "*01\r\n$4\r\nPING\r\n", nil, "invalid multibulk length"},
		{"minus zero mbulk", "*-0\r\n", nil, "invalid multibulk length"},
		{"plus mbulk", "*+1\r\n$4\r\nPING\r\n", nil, "invalid multibulk length"},
		{"leading zero bulk", "*1\r\n$04\r\nPING\r\n", nil, "invalid bulk length"},
		{"zeros bulk", "*1\r\n$0004\r\nPING\r\n", nil, "invalid bulk length"},
		{"minus zero bulk", "*2\r\n$4\r\nECHO\r\n$-0\r\n\r\n", nil, "invalid bulk length"},
		{"zero bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{"ECHO|"}, ""},
		{"expected dollar", "*1\r\n:1\r\n", nil, "expected '$', got ':'"},
		{"bad terminator", "*1\r\n$1\r\nab\r\n", nil, "not terminated by CRLF"},
		{"long count line", "*1\r\n$" + strings.Repeat("1", 100) + "\r\n", nil, "invalid bulk length"},
		{"truncated", "*2\r\n$3\r\nGET\r\n$1\r\n", nil, "unexpected EOF"},
	}
	for _, tc := range tests {
		for _, oneByte := range []bool{false, true} {
			got, err := readAll(t, tc.in, Limits{MaxArgs: 1000, MaxBulkBytes: 1 << 20}, oneByte)
			if tc.err == "" {
				if err != nil {
					t.Errorf("%s (oneByte=%v): %v", tc.name, oneByte, err)
					continue
				}
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("%s (oneByte=%v): got %q, want %q", tc.name, oneByte, got, tc.want)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s (oneByte=%v): err %v, want %q", tc.name, oneByte, err, tc.err)
			}
			if tc.err != "unexpected EOF" && !isProtocolError(err) {
				t.Errorf("%s: %v is not a protocol error", tc.name, err)
			}
		}
	}
}

// TestReaderDeclaredLengthDoesNotAllocate: a declared 1 GiB bulk with only
// a few bytes behind it costs a few KiB, not the declared length.
func TestReaderDeclaredLengthDoesNotAllocate(t *testing.T) {
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1073741000\r\nabc"
	rd := NewReader(strings.NewReader(in), Limits{MaxBulkBytes: 1 << 30, MaxQueryBytes: 2 << 30})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := rd.ReadCommand()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want unexpected EOF", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
		t.Fatalf("reading a declared 1 GiB bulk allocated %d bytes", d)
	}
}

// TestReaderDeclaredCountDoesNotAllocate: "*1000000" allocates no million-slot slice.
func TestReaderDeclaredCountDoesNotAllocate(t *testing.T) {
	rd := NewReader(strings.NewReader("*1000000\r\n$1\r\na\r\n"), Limits{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := rd.ReadCommand()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want unexpected EOF", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("a declared count of 1e6 allocated %d bytes", d)
	}
}

// TestReaderPreAuthLimits (R10): before AUTH a count past 10 is an
// "unauthenticated multibulk length" and a bulk past 16 KiB an
// "unauthenticated bulk length", redis-server 7.0's texts, while one
// unreadable or past the limits of everyone is still "invalid"; an inline
// command has no limit of its own before AUTH (redis-server has none).
func TestReaderPreAuthLimits(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"*11\r\n", "unauthenticated multibulk length"},
		{"*10\r\n$4\r\nAUTH\r\n", "unexpected EOF"},
		{"*2001\r\n", "invalid multibulk length"},
		{"*x\r\n", "invalid multibulk length"},
		{"*2\r\n$4\r\nAUTH\r\n$20000\r\n", "unauthenticated bulk length"},
		{"*2\r\n$4\r\nAUTH\r\n$16385\r\n", "unauthenticated bulk length"},
		{"*2\r\n$4\r\nAUTH\r\n$16384\r\n", "unexpected EOF"},
		{"*2\r\n$4\r\nAUTH\r\n$2000000\r\n", "invalid bulk length"},
		{"*2\r\n$4\r\nAUTH\r\n$-2\r\n", "invalid bulk length"},
	} {
		rd := NewReader(strings.NewReader(tc.in), Limits{MaxArgs: 2000, MaxBulkBytes: 1 << 20})
		rd.SetPreAuth(true)
		if _, err := rd.ReadCommand(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q before auth: %v, want %q", tc.in, err, tc.want)
		}
	}
	words := strings.Repeat("w ", 30)
	got, err := readAllPreAuth(words + "\r\n")
	if err != nil || len(got) != 1 || len(got[0]) != 30 {
		t.Fatalf("an inline command of 30 words before auth: %d commands, err %v", len(got), err)
	}
}

func readAllPreAuth(in string) ([][][]byte, error) {
	rd := NewReader(strings.NewReader(in), Limits{})
	rd.SetPreAuth(true)
	var out [][][]byte
	for {
		args, err := rd.ReadCommand()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, append([][]byte(nil), args...))
	}
}

// TestReaderLinesAsRedis (R11): header lines and inline commands are cut
// where redis-server 7.0 cuts them: a header ends at its CR (a long one
// is an invalid length; only more than 64 KiB without a CR is "too big"),
// its first byte is looked at once the line is whole, a CR not followed by
// LF is a protocol error; an inline line is refused only once more than
// 64 KiB wait without a LF; inline words split as sdssplitargs does.
func TestReaderLinesAsRedis(t *testing.T) {
	zeros := strings.Repeat("0", 70)
	tests := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"long mbulk count", "*" + zeros + "1\r\n$4\r\nPING\r\n", nil, "invalid multibulk length"},
		{"long bulk count", "*1\r\n$" + zeros + "4\r\nPING\r\n", nil, "invalid bulk length"},
		{"no CR in 64 KiB mbulk", "*" + strings.Repeat("1", 70000), nil, "too big mbulk count string"},
		{"no CR in 64 KiB bulk", "*1\r\n" + strings.Repeat("x", 70000), nil, "too big bulk count string"},
		{"mbulk CR without LF", "*1\rX$4\r\nPING\r\n", nil, "line is not terminated by CRLF"},
		{"bulk CR without LF", "*1\r\n$4\rXPING\r\n", nil, "line is not terminated by CRLF"},
		{"bad mbulk before its CR without LF", "*x\rX", nil, "invalid multibulk length"},
		{"LF only", "*1\n$4\r\nPING\r\n", nil, "invalid multibulk length"},
		{"dollar looked at once the line is whole", "*1\r\n:1\r\n", nil, "expected '$', got ':'"},
		{"CR for a dollar", "*1\r\n\r\r\n", nil, "expected '$', got '\r'"},
		{"raw byte in expected dollar", "*1\r\n\x01\r\n", nil, "expected '$', got '\x01'"},
		{"inline of 64 KiB with its CRLF", strings.Repeat(" ", 65535) + "\r\nPING\r\n", []string{"PING"}, ""},
		{"inline of 64 KiB + 1", strings.Repeat("a", 65537) + "\n", nil, "too big inline request"},
		{"vertical tab and form feed inside words", "ECHO a\vb c\fd\r\n", []string{"ECHO|a\vb|c\fd"}, ""},
		{"leading vertical tab", "\vECHO\va\f\r\n", []string{"ECHO\va\f"}, ""},
		{"quote inside a word", "ECHO a'b' c\"d e\"\r\n", []string{"ECHO|ab|cd e"}, ""},
		{"closing quote inside a word", "ECHO a'b'c\r\n", nil, "unbalanced quotes"},
		{"unbalanced quote inside a word", "ECHO a\"b\r\n", nil, "unbalanced quotes"},
		{"closing quote then vertical tab", "ECHO \"a\"\vb\r\n", []string{"ECHO|a|b"}, ""},
		{"closing quote then quote", "ECHO \"a\"\"b\"\r\n", nil, "unbalanced quotes"},
		{"hex needs two digits", "ECHO \"\\x4\" \"\\x41\\x4g\"\r\n", []string{"ECHO|x4|Ax4g"}, ""},
		{"single quote escapes", "ECHO 'it\\'s' '\\n'\r\n", []string{"ECHO|it's|\\n"}, ""},
	}
	for _, tc := range tests {
		for _, oneByte := range []bool{false, true} {
			got, err := readAll(t, tc.in, Limits{MaxArgs: 1000, MaxBulkBytes: 1 << 20}, oneByte)
			if tc.err == "" {
				if err != nil || strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("%s (oneByte=%v): got %q, %v; want %q", tc.name, oneByte, got, err, tc.want)
				}
				continue
			}
			if !isProtocolError(err) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s (oneByte=%v): err %v, want a protocol error %q", tc.name, oneByte, err, tc.err)
			}
		}
	}
}

// TestReaderManySmallArgsGrowsBuffer: a command bigger than the buffer made
// of small arguments is read whole, and the buffer shrinks afterwards.
func TestReaderManySmallArgsGrowsBuffer(t *testing.T) {
	var b bytes.Buffer
	n := 20000
	b.WriteString("*20001\r\n$4\r\nMGET\r\n")
	for i := 0; i < n; i++ {
		b.WriteString("$6\r\nkey:00\r\n")
	}
	b.WriteString("*1\r\n$4\r\nPING\r\n")
	rd := NewReader(&b, Limits{BufferBytes: 1024})
	args, err := rd.ReadCommand()
	if err != nil || len(args) != n+1 || string(args[n]) != "key:00" {
		t.Fatalf("got %d args, err %v", len(args), err)
	}
	args, err = rd.ReadCommand()
	if err != nil || string(args[0]) != "PING" {
		t.Fatalf("next command: %q %v", args, err)
	}
	if _, err := rd.ReadCommand(); err != io.EOF {
		t.Fatalf("end of stream: %v", err)
	}
	if len(rd.buf) > 4*1024 {
		t.Fatalf("buffer kept at %d bytes after the big command", len(rd.buf))
	}
}

func BenchmarkReaderPipeline(b *testing.B) {
	cmd := "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n"
	in := strings.Repeat(cmd, 1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	src := strings.NewReader(in)
	rd := NewReader(src, Limits{})
	for b.Loop() {
		src.Reset(in)
		for range 1000 {
			if _, err := rd.ReadCommand(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// chunkyReader returns at most a random 1 to max bytes per Read.
type chunkyReader struct {
	r   io.Reader
	rnd *rand.Rand
	max int
}

func (c *chunkyReader) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), 1+c.rnd.IntN(c.max))])
}

// TestReaderChunksKeepArguments: commands of many arguments that fill the
// buffer many times over (so their filled buffers are kept as chunks, not
// copied), mixed with arguments larger than the buffer, bulks large enough
// to be read on their own, inline commands and pipelined small ones, read
// through random short reads: every argument comes out as sent.
func TestReaderChunksKeepArguments(t *testing.T) {
	rnd := rand.New(rand.NewPCG(18, 6))
	var in bytes.Buffer
	var want [][]string
	for c := 0; c < 60; c++ {
		if c%7 == 3 {
			in.WriteString("SET inline \"v a l\"\r\n")
			want = append(want, []string{"SET", "inline", "v a l"})
			continue
		}
		n := 1 + rnd.IntN(3000)
		args := []string{"EXISTS"}
		for i := 0; i < n; i++ {
			var a string
			switch r := rnd.IntN(1000); {
			case r < 2:
				a = strings.Repeat(string(rune('A'+i%26)), 70<<10+rnd.IntN(1000)) // read on its own
			case r < 20:
				a = strings.Repeat(string(rune('a'+i%26)), 1000+rnd.IntN(4000)) // larger than the buffer
			default:
				a = fmt.Sprint("k", c, ":", i)
			}
			args = append(args, a)
		}
		fmt.Fprintf(&in, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&in, "$%d\r\n%s\r\n", len(a), a)
		}
		want = append(want, args)
	}
	rd := NewReader(&chunkyReader{r: &in, rnd: rnd, max: 3000}, Limits{BufferBytes: 1024, MaxArgs: 10000})
	for c, w := range want {
		args, err := rd.ReadCommand()
		if err != nil {
			t.Fatalf("command %d: %v", c, err)
		}
		if len(args) != len(w) {
			t.Fatalf("command %d: %d arguments, want %d", c, len(args), len(w))
		}
		for i := range w {
			if string(args[i]) != w[i] {
				t.Fatalf("command %d, argument %d: %d bytes %.20q, want %d bytes %.20q", c, i, len(args[i]), args[i], len(w[i]), w[i])
			}
		}
	}
	if _, err := rd.ReadCommand(); err != io.EOF {
		t.Fatalf("end of stream: %v", err)
	}
}

// TestBigBulkCutShort (R6): a big bulk whose sender stops part-way ends
// with io.ErrUnexpectedEOF, having allocated at most three times what
// arrived (the pieces, and once half arrived the bulk's slice), where the
// doubling slice allocated more.
func TestBigBulkCutShort(t *testing.T) {
	for _, sent := range []int{100 << 10, 3 << 20, 40 << 20} {
		in := io.MultiReader(strings.NewReader("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$67108864\r\n"),
			bytes.NewReader(make([]byte, sent)))
		rd := NewReader(&smallReads{r: in, max: 1 << 20}, Limits{MaxBulkBytes: 64 << 20})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := rd.ReadCommand()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%d of 64 MiB sent: %v, want unexpected EOF", sent, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(3*sent+(2<<20)) {
			t.Fatalf("%d of 64 MiB sent: allocated %d bytes, want at most three times what arrived", sent, alloc)
		}
	}
}

// smallReads returns at most max bytes per Read, as a socket does.
type smallReads struct {
	r   io.Reader
	max int
}

func (s *smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.max)]) }

func isProtocolError(err error) bool {
	_, ok := errors.AsType[*ProtocolError](err)
	return ok
}
