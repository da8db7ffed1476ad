package server

import (
	"errors"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/tiercache/tiercache/resp"
)

// MIGRATE's side of the conversation with the target, as Redis 7.0's
// migrateCommand has it, over a connection of the cache
// (migrate_sockets.go): AUTH when given, SELECT db when db is not the
// database the connection last selected (a new connection's is -1, so -1
// sends none), then one RESTORE per key.

// migrateChunk is the most bytes written in one call, each bounded by the
// timeout (migrateCommand writes "in 64K chunks").
const migrateChunk = 64 * 1024

// migrateLine bounds the reply line kept (migrateCommand's char
// buf[1024]): the rest of a longer one is read and dropped.
const migrateLine = 1024

// errEmptyLine is a reply of a lone "\n", which Redis's syncReadLine
// reports as a failed read (it reads 0 bytes; "\r\n" reads 1, an empty
// line taken as an acknowledgement).
var errEmptyLine = errors.New("server: MIGRATE target answered an empty line")

// migrate sends items to host:port and returns the keys the target
// restored and the error to answer ("" for OK). A socket error that is
// not a timeout, before any RESTORE was acknowledged, is retried once on
// a new connection, as Redis retries (its may_retry). restoreCmd is
// RESTORE-ASKING in cluster mode, as Redis's.
func (ms *migrateSockets) migrate(host string, port []byte, o migrateArgs, items []migrateItem, cluster bool, now func() int64) (acked [][]byte, reply string) {
	// Redis resolves the address and starts a non-blocking connect
	// (anetTcpNonBlockConnect): only a failure there is "connecting";
	// a refused or timed out connect fails the first write
	// (connSocketBlockingConnect reports success either way).
	addr := net.JoinHostPort(host, strconv.Itoa(atoi(port)))
	if _, err := net.ResolveTCPAddr("tcp", addr); err != nil || host == "" { // getaddrinfo of "" fails; Go would dial the local host
		return nil, errMigrateConnect
	}
	name := host + ":" + string(port) // migrateGetSocket's key: the arguments as written
	for retried := false; ; retried = true {
		cs, err := ms.get(name, addr, o.timeout)
		if err != nil {
			if retried || timedOut(err) {
				return nil, errMigrateIO(true)
			}
			continue
		}
		cs.timeout = o.timeout
		acked, reply, failed, retry := cs.exchange(o, items, cluster, now)
		switch {
		case failed:
		case reply != "":
			cs.lastDB = -1 // the target answered an error: SELECT again next time
		default:
			cs.lastDB = o.db
		}
		ms.done(cs, failed)
		if !retry || retried {
			return acked, reply
		}
	}
}

// exchange sends the request and reads its replies; failed: a socket
// error or a timeout happened (the connection is to be closed); retry: it
// failed so that one more try is allowed (not a timeout, nothing
// acknowledged).
func (t *migrateSocket) exchange(o migrateArgs, items []migrateItem, cluster bool, now func() int64) (acked [][]byte, reply string, failed, retry bool) {
	sel := t.lastDB != o.db
	req, sent := migrateRequest(o, sel, items, cluster, now()/int64(time.Millisecond))
	for pos := 0; pos < len(req); {
		n := min(len(req)-pos, migrateChunk)
		t.nc.SetWriteDeadline(time.Now().Add(t.timeout))
		if _, err := t.nc.Write(req[pos : pos+n]); err != nil {
			return nil, errMigrateIO(true), true, !timedOut(err)
		}
		pos += n
	}
	var authLine, selectLine []byte
	var err error
	if o.pass != nil {
		if authLine, err = t.line(); err != nil {
			return nil, errMigrateIO(false), true, !timedOut(err)
		}
	}
	if sel {
		if selectLine, err = t.line(); err != nil {
			return nil, errMigrateIO(false), true, !timedOut(err)
		}
	}
	var refusal []byte // the first error the target answered
	for j, it := range sent {
		line, err := t.line()
		if err != nil {
			if refusal != nil {
				failed = true // closed, and the target's error answered
				break
			}
			return acked, errMigrateIO(false), true, j == 0 && !timedOut(err)
		}
		bad := refused(authLine) || refused(selectLine) || refused(line)
		if !bad {
			acked = append(acked, it.key)
			continue
		}
		if refusal == nil {
			switch {
			case refused(authLine):
				refusal = authLine
			case refused(selectLine):
				refusal = selectLine
			default:
				refusal = line
			}
		}
	}
	if refusal != nil {
		return acked, errMigrateTarget(refusal[1:]), failed, false
	}
	return acked, "", false, false
}

// refused reports whether a reply line is an error.
func refused(line []byte) bool { return len(line) > 0 && line[0] == '-' }

// line reads one reply line within the timeout, without its CRLF, at most
// migrateLine-1 bytes of it.
func (t *migrateSocket) line() ([]byte, error) {
	t.nc.SetReadDeadline(time.Now().Add(t.timeout))
	line := []byte{}
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
	n := len(line)
	if n == 0 {
		return nil, errEmptyLine
	}
	if line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// migrateRequest is what MIGRATE sends: AUTH or AUTH username password,
// SELECT db if sel, and RESTORE key ttl payload [REPLACE] for each item not
// expired by nowMS (its TTL at least 1 ms), as migrateCommand writes
// them; sent are those items.
func migrateRequest(o migrateArgs, sel bool, items []migrateItem, cluster bool, nowMS int64) (req []byte, sent []migrateItem) {
	if o.pass != nil {
		if o.user != nil {
			req = appendCommand(req, []byte("AUTH"), o.user, o.pass)
		} else {
			req = appendCommand(req, []byte("AUTH"), o.pass)
		}
	}
	if sel {
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
