package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Conn is one connection to a cache server, used by one goroutine.
type Conn interface {
	// Get returns key's value (appended to dst[:0]) and whether it was there.
	Get(ctx context.Context, dst []byte, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, val []byte) error
	// SetMany stores every pair in one round trip (pipelined).
	SetMany(ctx context.Context, keys []string, vals [][]byte) error
	// GetMany reads every key in one round trip (MGET, or memcached's get
	// of several keys): a string for a hit and nil for a miss, in the
	// order of keys, as go-redis's MGet answers.
	GetMany(ctx context.Context, keys []string) ([]any, error)
	Close() error
}

// Dialer opens connections to one server.
type Dialer interface {
	Dial() (Conn, error)
	Close() error
}

// NewDialer returns a dialer of proto "resp" (go-redis, RESP2) or
// "memcache" (memcached's text protocol) on the Unix socket path.
// conns bounds go-redis's pool.
func NewDialer(proto, path string, conns int) (Dialer, error) {
	switch proto {
	case "resp":
		return RedisDialer(NewRedis(path, conns)), nil
	case "memcache":
		return memcacheDialer(path), nil
	}
	return nil, fmt.Errorf("unknown protocol %q (resp or memcache)", proto)
}

// NewRedis is a go-redis client on the Unix socket path with a pool of
// conns connections, RESP2, no retries (an error is counted, not hidden)
// and timeouts long enough for cold reads under load.
func NewRedis(path string, conns int) *redis.Client {
	return redis.NewClient(&redis.Options{
		Network: "unix", Addr: path, Protocol: 2, PoolSize: conns, MinIdleConns: 0,
		MaxRetries: -1, DialTimeout: 5 * time.Second, ReadTimeout: 60 * time.Second, WriteTimeout: 60 * time.Second,
		DisableIdentity: true, ContextTimeoutEnabled: false,
	})
}

// RedisDialer hands out connections of c's pool.
func RedisDialer(c *redis.Client) Dialer { return &respDialer{c} }

type respDialer struct{ c *redis.Client }

func (d *respDialer) Dial() (Conn, error) { return respConn{d.c}, nil }
func (d *respDialer) Close() error        { return d.c.Close() }

// respConn shares the client's pool: goroutines get a connection each per
// command, which is what a go-redis application does.
type respConn struct{ c *redis.Client }

func (r respConn) Get(ctx context.Context, dst []byte, key string) ([]byte, bool, error) {
	v, err := r.c.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return dst[:0], false, nil
	}
	if err != nil {
		return dst[:0], false, err
	}
	return append(dst[:0], v...), true, nil
}

func (r respConn) Set(ctx context.Context, key string, val []byte) error {
	return r.c.Set(ctx, key, val, 0).Err()
}

func (r respConn) SetMany(ctx context.Context, keys []string, vals [][]byte) error {
	p := r.c.Pipeline()
	for j, k := range keys {
		p.Set(ctx, k, vals[j], 0)
	}
	_, err := p.Exec(ctx)
	return err
}

func (r respConn) GetMany(ctx context.Context, keys []string) ([]any, error) {
	return r.c.MGet(ctx, keys...).Result()
}

func (r respConn) Close() error { return nil }

type memcacheDialer string

func (d memcacheDialer) Dial() (Conn, error) {
	c, err := net.DialTimeout("unix", string(d), 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &mcConn{c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10)}, nil
}

func (d memcacheDialer) Close() error { return nil }

// mcConn speaks the few commands of memcached's text protocol it needs:
// get (of one key or several) and set (flags 0, no expiry).
type mcConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func (m *mcConn) Get(ctx context.Context, dst []byte, key string) ([]byte, bool, error) {
	m.w.WriteString("get ")
	m.w.WriteString(key)
	m.w.WriteString("\r\n")
	if err := m.w.Flush(); err != nil {
		return dst[:0], false, err
	}
	line, err := m.line()
	if err != nil {
		return dst[:0], false, err
	}
	if line == "END" {
		return dst[:0], false, nil
	}
	dst, err = m.value(line, key, dst)
	if err != nil {
		return dst[:0], false, err
	}
	if end, err := m.line(); err != nil || end != "END" {
		return dst[:0], false, fmt.Errorf("memcache get %s: %q after the value (%v)", key, end, err)
	}
	return dst, true, nil
}

// GetMany sends one get of every key; memcached answers a VALUE block
// for each key it holds, in the order asked (a key asked twice twice),
// then END.
func (m *mcConn) GetMany(ctx context.Context, keys []string) ([]any, error) {
	m.w.WriteString("get")
	for _, k := range keys {
		m.w.WriteByte(' ')
		m.w.WriteString(k)
	}
	m.w.WriteString("\r\n")
	if err := m.w.Flush(); err != nil {
		return nil, err
	}
	out := make([]any, len(keys))
	var buf []byte
	for j := 0; ; j++ {
		line, err := m.line()
		if err != nil {
			return nil, err
		}
		if line == "END" {
			return out, nil
		}
		f := strings.Fields(line)
		for len(f) > 1 && j < len(keys) && keys[j] != f[1] {
			j++ // a miss: memcached says nothing of it
		}
		if j == len(keys) {
			return nil, fmt.Errorf("memcache get of %d keys: reply %q is not for a key asked next", len(keys), line)
		}
		if buf, err = m.value(line, keys[j], buf); err != nil {
			return nil, err
		}
		out[j] = string(buf)
	}
}

// value reads the value a "VALUE <key> <flags> <bytes>" line announces
// (appended to dst[:0]) and the CRLF after it.
func (m *mcConn) value(line, key string, dst []byte) ([]byte, error) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "VALUE" || f[1] != key {
		return dst[:0], fmt.Errorf("memcache get %s: reply %q", key, line)
	}
	n, err := strconv.Atoi(f[3])
	if err != nil || n < 0 {
		return dst[:0], fmt.Errorf("memcache get %s: reply %q", key, line)
	}
	if cap(dst) < n+2 {
		dst = make([]byte, n+2)
	}
	dst = dst[:n+2]
	if _, err := io.ReadFull(m.r, dst); err != nil {
		return dst[:0], err
	}
	if string(dst[n:]) != "\r\n" {
		return dst[:0], fmt.Errorf("memcache get %s: value not followed by CRLF", key)
	}
	return dst[:n], nil
}

func (m *mcConn) writeSet(key string, val []byte) {
	m.w.WriteString("set ")
	m.w.WriteString(key)
	m.w.WriteString(" 0 0 ")
	m.w.WriteString(strconv.Itoa(len(val)))
	m.w.WriteString("\r\n")
	m.w.Write(val)
	m.w.WriteString("\r\n")
}

func (m *mcConn) readStored(key string) error {
	line, err := m.line()
	if err != nil {
		return err
	}
	if line != "STORED" {
		return fmt.Errorf("memcache set %s: %s", key, line)
	}
	return nil
}

func (m *mcConn) Set(ctx context.Context, key string, val []byte) error {
	m.writeSet(key, val)
	if err := m.w.Flush(); err != nil {
		return err
	}
	return m.readStored(key)
}

func (m *mcConn) SetMany(ctx context.Context, keys []string, vals [][]byte) error {
	for j, k := range keys {
		m.writeSet(k, vals[j])
	}
	if err := m.w.Flush(); err != nil {
		return err
	}
	var first error
	for _, k := range keys {
		if err := m.readStored(k); err != nil {
			if _, proto := err.(net.Error); proto || errors.Is(err, io.EOF) {
				return err
			}
			if first == nil {
				first = err
			}
		}
	}
	return first
}

func (m *mcConn) line() (string, error) {
	s, err := m.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(s, "\r\n"), nil
}

func (m *mcConn) Close() error { return m.c.Close() }
