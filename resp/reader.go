package resp

import (
	"bytes"
	"fmt"
	"io"
	"sync/atomic"
)

// Limits applied to clients that have not authenticated yet (when auth is
// required), as Redis does (networking.c: processMultibulkBuffer).
const (
	preAuthMaxArgs = 10
	preAuthMaxBulk = 16 << 10
	// maxCountLine bounds the "$<n>" header line NextGet and NextSet look
	// for (past it they leave the command to ReadCommand).
	maxCountLine = 64
	// bigMinChunk: a bulk longer than this (or than half the buffer) that is
	// not yet fully buffered is read into a slice of its own (readBig).
	bigMinChunk = 64 << 10
)

// The defaults of Limits' fields.
const (
	DefaultMaxBulk    = 512 << 20 // Redis's proto-max-bulk-len
	DefaultMaxArgs    = 1 << 20
	DefaultMaxInline  = 64 << 10 // Redis's PROTO_INLINE_MAX_SIZE
	DefaultMaxQuery   = 1 << 30  // Redis's client-query-buffer-limit
	DefaultReadBuffer = 64 << 10
)

// Reader reads RESP commands (multibulk arrays of bulk strings, or inline
// commands) from a connection with every limit checked before memory is
// committed: a declared length only bounds what may arrive, and buffers grow
// as bytes actually arrive.
type Reader struct {
	rd   io.Reader
	idle IdleReader // rd, if it can wait for input without a buffer
	// getBuf, putBuf: pool.get and pool.put as the method values fillIdle
	// hands to idle.
	getBuf func() []byte
	putBuf func([]byte)
	pool   *bufPool // lends buf (of initBuf bytes) while input is being read
	buf    []byte   // nil while idle
	r      int      // start of the command being parsed
	p      int      // parse position
	w      int      // end of buffered data

	initBuf   int
	maxBulk   int
	maxArgs   int
	maxInline int
	maxQuery  int
	preAuth   bool

	// BeforeBlock, when set, runs before every read that may block (the
	// connection flushes its pending replies there: one flush per batch),
	// before the buffer is compacted: the arguments ReadCommand returned
	// for the commands of the last read are still intact when it runs.
	BeforeBlock func() error
	// MayKeep, when set, says whether the caller may keep (Keep) a big
	// bulk of n bytes: one it may not is received into a recycled
	// off-heap buffer (R6), and the caller then calls Recycle whenever
	// its replies were flushed, and Release at the end (else the buffers
	// stay mapped). Unset, every big bulk is a slice of the Go heap.
	MayKeep func(n int) bool
	// PoisonBig is a test seam: Recycle overwrites each off-heap buffer
	// with PoisonByte before it goes back, so that whoever still refers
	// to a recycled big bulk reads PoisonByte bytes and a test sees it.
	PoisonBig bool
	// Dropped, when set, counts the bytes of the buffers a big command
	// grew that the Reader lets go once it is done.
	Dropped *atomic.Int64

	n       int  // declared argument count of the current command; -1 unknown
	skipped bool // inline() consumed an empty line
	spans   []span
	blocks  [][]span // full blocks of spanBlock spans before spans
	base    int      // the command's offset of buf[0] (spans hold command offsets)
	retired []chunk  // earlier buffers of the current command, in order
	args    [][]byte
	bigs    []bigBulk // the current command's big bulks (R6)
	done    [][]byte  // earlier commands' off-heap buffers, for Recycle
	query   int       // bytes of the current command held in bigs
	reads   uint64
}

// Reads counts the reads from the underlying reader so far.
func (rd *Reader) Reads() uint64 { return rd.reads }

// span is where an argument is: at command offsets off:end (in buf, or in
// one of the retired chunks), or, when off < 0, bigs[-off-1][:end]. 8
// bytes, so a command of a million arguments costs 8 MB of spans (and 24 MB
// of the [][]byte handed to the command).
type span struct {
	off, end int32
}

// spanBlock is how many spans one block holds: a command's spans grow by
// doubling up to one block, then block by block, so a million of them
// leave no garbage copies behind.
const spanBlock = 8192

// chunk is a buffer a command's arguments filled before it was complete,
// kept as it was instead of copied into a larger buffer (fill): b[i] is at
// command offset base+i.
type chunk struct {
	base int
	b    []byte
}

// IdleReader is a connection that can wait for input without holding a
// buffer, so the Reader holds none while it waits (R5).
type IdleReader interface {
	// ReadIdle reads into b; with nothing to read it gives b back with
	// put, waits, and reads into a buffer from get. It returns the
	// buffer read into (nil after an error while waiting).
	ReadIdle(b []byte, get func() []byte, put func([]byte)) ([]byte, int, error)
}

// bigArgs: a command with more arguments than this gives its argument
// slices back once done, instead of keeping them for the next command.
const bigArgs = 4096

// Limits are a Reader's limits; zero fields take the Default values.
type Limits struct {
	// BufferBytes is the read buffer lent while a command is read.
	BufferBytes int
	// MaxBulkBytes is the longest bulk string; MaxArgs the most arguments
	// of one command; MaxInlineBytes the longest inline command line;
	// MaxQueryBytes the most bytes buffered for one command.
	MaxBulkBytes, MaxArgs, MaxInlineBytes, MaxQueryBytes int
}

// NewReader returns a Reader over rd.
func NewReader(rd io.Reader, lim Limits) *Reader {
	def := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	buf := def(lim.BufferBytes, DefaultReadBuffer)
	idle, _ := rd.(IdleReader)
	return &Reader{rd: rd, idle: idle, pool: poolFor(buf), initBuf: buf,
		maxBulk: def(lim.MaxBulkBytes, DefaultMaxBulk), maxArgs: def(lim.MaxArgs, DefaultMaxArgs),
		maxInline: def(lim.MaxInlineBytes, DefaultMaxInline), maxQuery: def(lim.MaxQueryBytes, DefaultMaxQuery), n: -1}
}

// SetPreAuth switches the small pre-authentication limits on or off.
func (rd *Reader) SetPreAuth(on bool) { rd.preAuth = on }

// Buffered is the number of received bytes not yet consumed.
func (rd *Reader) Buffered() int { return rd.w - rd.r }

// ReadCommand returns the next command's arguments. The slices are valid
// until the next call. A *ProtocolError means the stream is unusable.
func (rd *Reader) ReadCommand() ([][]byte, error) {
	rd.startCommand()
	for {
		done, err := rd.parse()
		if err != nil {
			return nil, err
		}
		if done {
			return rd.finish(), nil
		}
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}

func (rd *Reader) startCommand() {
	rd.n = -1
	dropped := 0
	rd.spans = rd.spans[:0]
	if cap(rd.spans) > bigArgs || len(rd.blocks) > 0 {
		dropped += 8 * (cap(rd.spans) + len(rd.blocks)*spanBlock)
		rd.spans = nil
		clear(rd.blocks)
		rd.blocks = rd.blocks[:0]
	}
	if len(rd.retired) > 0 {
		for _, ch := range rd.retired {
			dropped += cap(ch.b)
		}
		clear(rd.retired)
		rd.retired = rd.retired[:0]
	}
	rd.base = 0
	// The last command's arguments must not keep its buffers alive (a
	// 64 MiB value in bigs, a grown buf).
	clear(rd.args)
	rd.args = rd.args[:0]
	if cap(rd.args) > bigArgs {
		dropped += 24 * cap(rd.args)
		rd.args = nil
	}
	rd.retireBigs() // not counted in Dropped: Recycle lends them again
	rd.query = 0
	if rd.r == rd.w {
		rd.r, rd.p, rd.w = 0, 0, 0
		if len(rd.buf) > rd.initBuf {
			dropped += len(rd.buf)
			rd.buf = nil // give back a buffer grown for one big command
		}
	}
	rd.p = rd.r
	if dropped > 0 && rd.Dropped != nil {
		rd.Dropped.Add(int64(dropped))
	}
}

// Release lets go of every buffer (the connection is closing), counting
// the grown ones in Dropped.
func (rd *Reader) Release() {
	rd.r, rd.w = 0, 0
	rd.startCommand()
	rd.Recycle() // the replies were sent or dropped
	rd.buf = nil // one of the pool's size is left to the collector: it may still be in a caller's hands
}

func (rd *Reader) finish() [][]byte {
	if n := rd.nspans(); cap(rd.args) < n {
		rd.args = make([][]byte, 0, n) // exactly: no doubling for a million arguments
	}
	rd.args = rd.args[:0]
	ci := 0 // the retired chunk the next span in one may be in (spans come in order)
	for _, blk := range rd.blocks {
		ci = rd.appendArgs(blk, ci)
	}
	rd.appendArgs(rd.spans, ci)
	rd.r = rd.p
	return rd.args
}

// appendArgs appends the arguments spans name to args; ci is the first
// retired chunk a span may be in, and the one after the last returned.
func (rd *Reader) appendArgs(spans []span, ci int) int {
	for _, s := range spans {
		switch {
		case s.off < 0:
			rd.args = append(rd.args, rd.bigs[-s.off-1].b[:s.end:s.end])
		case int(s.off) >= rd.base:
			rd.args = append(rd.args, rd.buf[int(s.off)-rd.base:int(s.end)-rd.base:int(s.end)-rd.base])
		default:
			for int(s.off) >= rd.retired[ci].base+len(rd.retired[ci].b) {
				ci++
			}
			ch := rd.retired[ci]
			lo, hi := int(s.off)-ch.base, int(s.end)-ch.base
			rd.args = append(rd.args, ch.b[lo:hi:hi])
		}
	}
	return ci
}

// nspans is the number of arguments parsed so far.
func (rd *Reader) nspans() int { return len(rd.blocks)*spanBlock + len(rd.spans) }

// parse advances over what is buffered; done reports a complete command.
// When it needs more bytes it leaves p at a point it can resume from.
func (rd *Reader) parse() (done bool, err error) {
	for {
		if rd.n < 0 {
			if rd.p >= rd.w {
				return false, nil
			}
			if rd.buf[rd.p] != '*' {
				done, err := rd.inline()
				if rd.skipped { // an empty inline line: look at what follows
					rd.skipped = false
					continue
				}
				return done, err
			}
			line, lf, ok, err := rd.line("too big mbulk count string")
			if !ok || err != nil {
				return false, err
			}
			// redis-server 7.0 (networking.c processMultibulkBuffer): an
			// unreadable count is invalid, and one past 10 before AUTH
			// unauthenticated (R10).
			n, ok := ParseInt(line[1:])
			if !ok || n > int64(rd.maxArgs) {
				return false, protoErr("invalid multibulk length")
			}
			if rd.preAuth && n > preAuthMaxArgs {
				return false, protoErr("unauthenticated multibulk length")
			}
			if !lf {
				return false, protoErr(errNoLF)
			}
			if n <= 0 { // "*0" and "*-1" are empty commands: skip them
				rd.r = rd.p
				continue
			}
			rd.n = int(n)
			if cap(rd.spans) < min(rd.n, 1024) {
				rd.spans = make([]span, 0, min(rd.n, 1024)) // never sized by the declared count alone
			}
		}
		for rd.nspans() < rd.n {
			if rd.p >= rd.w {
				return false, nil
			}
			hdr := rd.p
			// redis-server looks at the header's first byte once its line
			// is whole (R11).
			line, lf, ok, err := rd.line("too big bulk count string")
			if !ok || err != nil {
				return false, err
			}
			if c := rd.buf[hdr]; c != '$' { // line may be empty: "\r\r\n"
				return false, protoErr(fmt.Sprintf("expected '$', got '%s'", printable(c)))
			}
			blen, ok := ParseInt(line[1:])
			if !ok || blen < 0 || blen > int64(rd.maxBulk) {
				return false, protoErr("invalid bulk length")
			}
			if rd.preAuth && blen > preAuthMaxBulk {
				return false, protoErr("unauthenticated bulk length")
			}
			if !lf {
				return false, protoErr(errNoLF)
			}
			n := int(blen)
			if avail := rd.w - rd.p; avail < n+2 {
				if n+2 > max(bigMinChunk, len(rd.buf)/2) {
					if err := rd.readBig(n); err != nil {
						return false, err
					}
					continue
				}
				rd.p = hdr // re-read the header once the body is here
				return false, nil
			}
			if rd.buf[rd.p+n] != '\r' || rd.buf[rd.p+n+1] != '\n' {
				return false, protoErr("bulk string is not terminated by CRLF")
			}
			rd.addSpan(span{off: int32(rd.base + rd.p), end: int32(rd.base + rd.p + n)})
			rd.p += n + 2
		}
		return true, nil
	}
}

// addSpan appends sp. Full spans double their capacity up to spanBlock
// (and the declared count), then go to blocks and a new block starts, so
// the spans of a million arguments are allocated once, never copied.
func (rd *Reader) addSpan(sp span) {
	if len(rd.spans) == cap(rd.spans) {
		if cap(rd.spans) >= spanBlock {
			rd.blocks = append(rd.blocks, rd.spans)
			rd.spans = make([]span, 0, max(1, min(spanBlock, rd.n-rd.nspans())))
		} else {
			ns := make([]span, len(rd.spans), max(16, min(2*cap(rd.spans), spanBlock, rd.n)))
			copy(ns, rd.spans)
			rd.spans = ns
		}
	}
	rd.spans = append(rd.spans, sp)
}

// line returns the header line at p up to its CR (without it) and moves
// p past the CR and the byte after it, once that byte has arrived: as
// redis-server 7.0 does (networking.c processMultibulkBuffer), which finds
// a header's end by its CR and refuses one only once more than
// PROTO_INLINE_MAX_SIZE bytes wait without a CR (R11). lf reports whether
// the byte after the CR is a LF: the caller answers errNoLF if not, once
// it has checked the line itself (redis-server skips that byte unread).
// ok is false when the line is not complete yet.
func (rd *Reader) line(tooBig string) (line []byte, lf, ok bool, err error) {
	buffered := rd.buf[rd.p:rd.w]
	seg := buffered
	lim := rd.maxInline
	if len(seg) > lim+1 {
		seg = seg[:lim+1]
	}
	i := bytes.IndexByte(seg, '\r')
	if i < 0 {
		if len(seg) > lim {
			return nil, false, false, protoErr(tooBig)
		}
		return nil, false, false, nil
	}
	if i+1 >= len(buffered) {
		return nil, false, false, nil // the byte after the CR is not here yet
	}
	rd.p += i + 2
	return seg[:i], buffered[i+1] == '\n', true, nil
}

// errNoLF: a header's CR not followed by a LF, which redis-server skips
// unread, is a protocol error here.
const errNoLF = "line is not terminated by CRLF"

// fill reads more bytes, compacting and (as bytes arrive) growing the
// buffer. A full buffer whose first half or more holds arguments of the
// command being read is kept as it is (retired) and the command goes on in
// a new buffer of the same size, instead of being copied into one of twice
// the size: a command of a million small arguments takes its bytes once,
// not once per doubling plus the copies left behind.
func (rd *Reader) fill() error {
	// BeforeBlock runs first, while the commands already parsed still
	// lie where their arguments point: the caller may read them there
	// (the server's slowlog keeps a pipelined command's arguments until
	// this hook), and the compaction below moves bytes over them.
	if rd.BeforeBlock != nil {
		if err := rd.BeforeBlock(); err != nil {
			return err
		}
	}
	if rd.buf != nil && rd.w == len(rd.buf) && rd.p-rd.r >= len(rd.buf)/2 {
		if err := rd.retire(); err != nil {
			return err
		}
	}
	if rd.r > 0 {
		shift := rd.r
		copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.w -= shift
		rd.p -= shift
		rd.r = 0
		rd.base += shift // the spans keep their offsets
	}
	if rd.buf == nil {
		rd.buf = rd.pool.get()
	}
	if rd.w == len(rd.buf) {
		if rd.w+rd.query >= rd.maxQuery {
			return protoErr("query buffer limit exceeded")
		}
		nb := make([]byte, min(2*len(rd.buf), rd.maxQuery-rd.query))
		copy(nb, rd.buf[:rd.w])
		rd.buf = nb
	}
	if rd.w == 0 && rd.idle != nil {
		return rd.fillIdle()
	}
	m, err := rd.rd.Read(rd.buf[rd.w:])
	rd.w += m
	rd.reads++
	if m == 0 && err != nil {
		if err == io.EOF && rd.w > rd.r {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// retire keeps the full buffer's parsed part, buf[:p], for the arguments
// in it, and moves what follows p to a new buffer of the same size.
func (rd *Reader) retire() error {
	rd.query += rd.p - rd.r
	if rd.query+(rd.w-rd.p) >= rd.maxQuery {
		return protoErr("query buffer limit exceeded")
	}
	rd.retired = append(rd.retired, chunk{base: rd.base, b: rd.buf[:rd.p]})
	nb := make([]byte, len(rd.buf))
	rd.w = copy(nb, rd.buf[rd.p:rd.w])
	rd.base += rd.p
	rd.buf, rd.r, rd.p = nb, 0, 0
	return nil
}

// fillIdle reads into an empty buffer: what has arrived, else it gives
// the buffer back to the pool while it waits for input (R5).
func (rd *Reader) fillIdle() error {
	if rd.getBuf == nil {
		rd.getBuf, rd.putBuf = rd.pool.get, rd.pool.put // method values made once
	}
	for {
		b := rd.buf
		rd.buf = nil // ReadIdle may give it back while it waits
		b, m, err := rd.idle.ReadIdle(b, rd.getBuf, rd.putBuf)
		rd.buf = b
		rd.reads++
		if m > 0 {
			rd.w = m
			return nil
		}
		if err != nil {
			return err
		}
		if rd.buf == nil {
			rd.buf = rd.pool.get()
		}
		// Woken with nothing read (a server's push is waiting): back to
		// the caller, which runs BeforeBlock before it reads again.
		return nil
	}
}

// printable is the byte redis-server's "got '%c'" prints: the byte itself
// (the error reply turns a CR or LF into a space, as redis-server's
// does); a NUL, after which redis-server's C string would end, is shown
// as \x00.
func printable(c byte) string {
	if c == 0 {
		return "\\x00"
	}
	return string([]byte{c})
}
