// Package resp is the Redis protocol on the wire: the Reader of requests
// (RESP2/RESP3 multibulk arrays of bulk strings, and inline commands), the
// Writer of replies (RESP2, or RESP3 after HELLO 3), the pool that lends
// both their buffers, ProtocolError, and the one parser of the numbers
// clients send (ParseInt, ParseFloat, ParseCursor) with redis-server's
// grammar. It knows no command: the server gives the arguments a
// meaning, and writes every reply through a Writer, never as RESP bytes
// of its own.
//
// A Reader reads one connection's commands: ReadCommand returns the next
// command's arguments, and NextGet takes a GET of one key (NextSet a SET
// of one key to a value, with no option) that is already wholly buffered
// without parsing anything else (a pipelined run of GETs or SETs costs a
// few compares each). A Writer encodes replies into one buffer
// that goes out on Flush; the bytes of a large cached value passed to
// BulkShared are sent from where they are, with the buffer's pieces
// around them, in one writev. A connection that can wait for input
// without a buffer (IdleReader) or write a net.Buffers itself
// (BuffersWriter) is used so.
//
// # Invariants
//
//   - R1: every limit (bulk length, argument count, inline length, bytes
//     of one command, and the smaller ones before AUTH, R10) is checked before
//     memory is committed for it; a declared length only bounds what may
//     arrive, and buffers grow as bytes arrive
//     (TestReaderDeclaredLengthDoesNotAllocate,
//     TestReaderDeclaredCountDoesNotAllocate, TestReaderPreAuthLimits).
//   - R2: a violation of the protocol is a *ProtocolError carrying
//     redis-server's text; lengths are read as redis-server reads them
//     (ParseInt): "*01", "$04", "*-0" and "$-0" are protocol errors
//     (TestReaderCommands).
//   - R3: the Reader yields the same commands whatever the read boundaries,
//     and taking GETs with NextGet and SETs with NextSet leaves the
//     command stream unchanged;
//     any byte stream yields commands or an error, never a panic nor an
//     argument past the limits (FuzzReader, with the stream split into
//     single bytes).
//   - R4: replies come out in the order written and the same bytes whether
//     a value is copied (Bulk), filled in place (BulkInto, which never
//     writes to the stream: a cache may call it holding a lock) or sent by
//     reference (BulkShared); a write error is sticky
//     (TestBulkSharedMatchesBulk, TestBulkIntoMatchesBulk,
//     TestWriterErrorSticky).
//   - R5: buffers are lent by a pool per size while bytes are read or
//     replies written; a Reader over an IdleReader gives its buffer back
//     while it waits for input. A command's arguments cost 8 bytes of span
//     and the 24-byte slice handed back each, and their bytes are received
//     once: a full read buffer whose first half or more holds arguments of
//     the command is kept as a chunk and the command goes on in a new
//     buffer of its size, instead of being copied into one twice as large
//     (TestReaderChunksKeepArguments, TestReaderManySmallArgsGrowsBuffer).
//   - R6: a big bulk that the Reader's MayKeep says the caller may not
//     keep is received into an off-heap buffer of its size class (at most
//     1/8 over its size; a mapping whose pages the kernel backs as bytes
//     arrive): one an earlier big bulk gave back, with no clearing and no
//     copy, else a new one; it goes back at the first Recycle after its
//     command (the caller calls Recycle once its replies were flushed) or
//     at Release, and Keep never gives it away (TestBigBulkRecycled;
//     the PoisonBig test seam overwrites each buffer as it goes back, for
//     the server's S50).
//     Any other big bulk gets a slice of the Go heap: its first half is
//     received into pieces of 1 MiB lent by a pool (or new ones no larger
//     than what arrived, R12), then one slice of
//     exactly its size, so a 64 MiB value allocates its 64 MiB once
//     (TestBigBulkAllocatesOnce), and a declared length commits memory
//     only as bytes arrive, at most three times what arrived
//     (TestBigBulkCutShort); Keep gives that slice to the caller, who may
//     keep it (TestBigBulkAllocatesOnce). Receiving either yields the P
//     after each MiB (the server's S18).
//   - R7: ParseInt is redis-server's string2ll, ParseFloat its string2ld
//     (glibc strtold, rounded to a long double), ParseCursor its SCAN
//     cursor's strtoul, and AppendFloat prints as its ld2string: each
//     accepts exactly what redis-server accepts (TestParseInt,
//     TestParseFloat, TestParseCursor, TestAppendFloat; the server's
//     TestNumbersMatchRedis sends every case to a redis-server 7.0 and to
//     tiercache through the commands that take numbers).
//   - R8: ParseDouble is redis-server's getDoubleFromObject (a score),
//     ParseDoubleLoose its zslParseRange's strtod (a range's end),
//     ParseDoubleSort its SORT weight's strtod (TestSortMatchesRedis), and
//     AppendDouble prints as its addReplyDouble ("%.17g", "inf", "-inf")
//     (TestParseDouble, TestAppendDouble; the server's
//     TestZSetDifferential compares scores with a redis-server 7.0).
//   - R9: a muted Writer (Mute) adds nothing to its buffer and writes
//     nothing, by any of its methods (BulkInto answers nil), while what
//     was buffered before stays and is flushed; an Error reply still
//     counts (TestWriterMute).
//   - R10: before AUTH (SetPreAuth) a multibulk count past 10 is refused
//     as "unauthenticated multibulk length" and a bulk past 16 KiB as
//     "unauthenticated bulk length", redis-server 7.0's texts, after the
//     checks of every client ("invalid ..." for an unreadable length or
//     one past the limits); an inline command has no limit of its own
//     before AUTH, as in redis-server: its line bounds it
//     (TestReaderPreAuthLimits).
//   - R11: lines are cut where redis-server 7.0 cuts them
//     (networking.c processMultibulkBuffer, processInlineBuffer; sds.c
//     sdssplitargs): a "*"/"$" header ends at its CR, so a long one is an
//     invalid length, and only more than MaxInlineBytes (64 KiB, its
//     PROTO_INLINE_MAX_SIZE) without a CR is "too big ... count string";
//     a bulk header's first byte is judged once its line is whole, and
//     "expected '$', got '%c'" shows the byte itself; an inline line is
//     refused only once more than MaxInlineBytes wait without a LF;
//     inline words are split on white space but end only at a space, tab,
//     CR or LF (a vertical tab or form feed inside a word is kept), and a
//     quote inside a word opens a quoted part of it
//     (TestReaderLinesAsRedis).
//   - R12: a declared length backs or allocates new memory only as its
//     bytes arrive: an off-heap buffer refuses huge pages until 2 MiB of
//     it have arrived (a huge page is backed whole at its first byte;
//     past that point what is backed is at most twice what arrived), and
//     a heap bulk's next piece is a pooled one or a new one the size of
//     what arrived (at least 64 KiB, at most 1 MiB), so a client that
//     declares 512 MiB and sends 100 bytes backs one 4 KiB page of the
//     buffer, or allocates under 512 KiB
//     (TestBigBulkDeclaredCommitsAsArrives).
//
// # Caveats
//
//   - The arguments ReadCommand, NextGet and NextSet return alias the Reader's
//     buffers: they are valid until the next ReadCommand.
//   - A Reader and a Writer belong to one goroutine each.
//   - A bulk not followed by CRLF, or a header's CR not followed by LF,
//     which redis-server reads past unchecked, is a protocol error here.
//   - A NUL byte is a byte like any other here: in an inline command or
//     a header, redis-server's C-string search for the line's end stops
//     at it, and it waits for more input (R11).
package resp
