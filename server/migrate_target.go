package server

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/tiercache/tiercache/resp"
)

// MIGRATE's side of the conversation with the target, as Redis 7.0's
// migrateCommand has it. Redis keeps the connection to a target for 10 s
// (MIGRATE_SOCKET_CACHE_TTL) and sends SELECT only when the database
// changed; tiercache dials the target for each call, so each call sends
// what Redis sends on a fresh connection: AUTH when given, SELECT db
// (unless db is -1, which Redis takes for the database already selected),
// then one RESTORE per key. So, unlike Redis, a call after one that
// authenticated needs AUTH again.

// migrateChunk is the most bytes written in one call, each bounded by the
// timeout (migrateCommand writes "in 64K chunks").
const migrateChunk = 64 * 1024

// migrateLine bounds the reply line kept (migrateCommand's char
// buf[1024]): the rest of a longer one is read and dropped.
const migrateLine = 1024

// errEmptyLine is a reply line with nothing in it, which Redis's
// syncReadLine reports as a failed read.
var errEmptyLine = errors.New("server: MIGRATE target answered an empty line")

// migrate sends items to host:port and returns the keys the target
// restored and the error to answer ("" for OK). A socket error that is
// not a timeout, before any RESTORE was acknowledged, is retried once on
// a new connection, as Redis retries (its may_retry). restoreCmd is
// RESTORE-ASKING in cluster mode, as Redis's.
func migrate(host string, port []byte, o migrateArgs, items []migrateItem, cluster bool, now func() int64) (acked [][]byte, reply string) {
	// Redis resolves the address and starts a non-blocking connect
	// (anetTcpNonBlockConnect): only a failure there is "connecting";
	// a refused or timed out connect fails the first write
	// (connSocketBlockingConnect reports success either way).
	addr := net.JoinHostPort(host, strconv.Itoa(atoi(port)))
	if _, err := net.ResolveTCPAddr("tcp", addr); err != nil || host == "" { // getaddrinfo of "" fails; Go would dial the local host
		return nil, errMigrateConnect
	}
	for retried := false; ; retried = true {
		nc, err := net.DialTimeout("tcp", addr, o.timeout) // each address the name has, in turn, as anetTcpGenericConnect
		if err != nil {
			if retried || timedOut(err) {
				return nil, errMigrateIO(true)
			}
			continue
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		t := migrateTarget{nc: nc, br: bufio.NewReaderSize(nc, migrateLine), timeout: o.timeout}
		acked, reply, retry := t.exchange(o, items, cluster, now)
		nc.Close()
		if !retry || retried {
			return acked, reply
		}
	}
}

// migrateTarget is one connection to a MIGRATE's target.
type migrateTarget struct {
	nc      net.Conn
	br      *bufio.Reader
	timeout time.Duration
}

// exchange sends the request and reads its replies; retry: it failed
// with a socket error that allows one more try (not a timeout, nothing
// acknowledged).
func (t *migrateTarget) exchange(o migrateArgs, items []migrateItem, cluster bool, now func() int64) (acked [][]byte, reply string, retry bool) {
	req, sent := migrateRequest(o, items, cluster, now()/int64(time.Millisecond))
	for pos := 0; pos < len(req); {
		n := min(len(req)-pos, migrateChunk)
		t.nc.SetWriteDeadline(time.Now().Add(t.timeout))
		if _, err := t.nc.Write(req[pos : pos+n]); err != nil {
			return nil, errMigrateIO(true), !timedOut(err)
		}
		pos += n
	}
	var authLine, selectLine []byte
	var err error
	if o.pass != nil {
		if authLine, err = t.line(); err != nil {
			return nil, errMigrateIO(false), !timedOut(err)
		}
	}
	if o.db != -1 {
		if selectLine, err = t.line(); err != nil {
			return nil, errMigrateIO(false), !timedOut(err)
		}
	}
	var failed []byte // the first error the target answered
	for j, it := range sent {
		line, err := t.line()
		if err != nil {
			if failed != nil {
				break
			}
			return acked, errMigrateIO(false), j == 0 && !timedOut(err)
		}
		bad := refused(authLine) || refused(selectLine) || refused(line)
		if !bad {
			acked = append(acked, it.key)
			continue
		}
		if failed == nil {
			switch {
			case refused(authLine):
				failed = authLine
			case refused(selectLine):
				failed = selectLine
			default:
				failed = line
			}
		}
	}
	if failed != nil {
		return acked, errMigrateTarget(failed[1:]), false
	}
	return acked, "", false
}

// refused reports whether a reply line is an error.
func refused(line []byte) bool { return len(line) > 0 && line[0] == '-' }

// line reads one reply line within the timeout, without its CRLF, at most
// migrateLine-1 bytes of it.
func (t *migrateTarget) line() ([]byte, error) {
	t.nc.SetReadDeadline(time.Now().Add(t.timeout))
	var line []byte
	for {
		b, err := t.br.ReadByte()
		if err != nil {
			return nil, err
		}
		if b == '\n' {
			break
		}
		if len(line) < migrateLine-1 {
			line = append(line, b)
		}
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 {
		return nil, errEmptyLine
	}
	return line, nil
}

// migrateRequest is what MIGRATE sends: AUTH or AUTH username password,
// SELECT db (not for -1), and RESTORE key ttl payload [REPLACE] for each item not
// expired by nowMS (its TTL at least 1 ms), as migrateCommand writes
// them; sent are those items.
func migrateRequest(o migrateArgs, items []migrateItem, cluster bool, nowMS int64) (req []byte, sent []migrateItem) {
	if o.pass != nil {
		if o.user != nil {
			req = appendCommand(req, []byte("AUTH"), o.user, o.pass)
		} else {
			req = appendCommand(req, []byte("AUTH"), o.pass)
		}
	}
	if o.db != -1 { // a new connection's last_dbid is -1: Redis sends SELECT for any other
		req = appendCommand(req, []byte("SELECT"), strconv.AppendInt(nil, o.db, 10))
	}
	restore := []byte("RESTORE")
	if cluster {
		restore = []byte("RESTORE-ASKING")
	}
	for _, it := range items {
		ttl := int64(0)
		if !it.expireAt.IsZero() {
			if ttl = it.expireAt.UnixMilli() - nowMS; ttl < 0 {
				continue // expired since it was read
			}
			ttl = max(ttl, 1)
		}
		args := [][]byte{restore, it.key, strconv.AppendInt(nil, ttl, 10), it.payload}
		if o.replace {
			args = append(args, []byte("REPLACE"))
		}
		req = appendCommand(req, args...)
		sent = append(sent, it)
	}
	return req, sent
}

// timedOut reports whether err is a timeout (Redis's errno ETIMEDOUT,
// after which it does not retry).
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// atoi reads a port as C's atoi does: leading blanks, a sign, the digits
// that follow; 0 when there are none.
func atoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	n := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && n < 1<<31; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if neg {
		n = -n
	}
	return n
}

// appendCommand appends args as a RESP command, an array of bulk strings.
func appendCommand(dst []byte, args ...[]byte) []byte {
	dst = resp.AppendArray(dst, len(args))
	for _, a := range args {
		dst = resp.AppendBulk(dst, a)
	}
	return dst
}
