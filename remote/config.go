package remote

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// Config configures the remote tier. Zero values take the defaults.
type Config struct {
	// Addrs are seed addresses (host:port) of a Redis Cluster, a Valkey
	// cluster or one Redis server (7.0 or later); the client learns the
	// rest of a cluster from them.
	Addrs []string
	// Username and Password authenticate (AUTH, ACL user or the default
	// user).
	Username, Password string
	// TLS, if set, is the client's TLS configuration (nil: plain TCP).
	TLS *tls.Config
	// Prefix starts every key the tier stores, so that several
	// deployments share one cluster (default "tiercache:").
	Prefix string
	// Timeout bounds one read or write round trip: a read past it is a
	// miss, counted (default 50 ms).
	Timeout time.Duration
	// DialTimeout bounds connecting to a node (default 1 s).
	DialTimeout time.Duration
	// ChunkBytes: a value larger than this is stored in pieces of this
	// size under keys of their own, spread over the cluster (default 1 MiB).
	ChunkBytes int
	// BreakerFailures is how many round trips in a row may fail before
	// the breaker opens (default 5); BreakerBackoff how long it stays open
	// at first (default 1 s), doubling at each failed probe up to 30 s.
	BreakerFailures int
	BreakerBackoff  time.Duration
	// Health is how often every node is pinged: the breaker's probe, and
	// what keeps a tracking connection to each node (default 250 ms).
	Health time.Duration
	Logger *zap.Logger
}

const (
	maxBackoff = 30 * time.Second
	// chunkGrace is how long the pieces of a value replaced or deleted
	// stay, so that a reader that read its header finds them.
	chunkGrace = 10 * time.Second
)

// EnsureDefaults fills zero fields.
func (c *Config) EnsureDefaults() {
	if c.Prefix == "" {
		c.Prefix = "tiercache:"
	}
	if c.Timeout == 0 {
		c.Timeout = 50 * time.Millisecond
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = time.Second
	}
	if c.ChunkBytes == 0 {
		c.ChunkBytes = 1 << 20
	}
	if c.BreakerFailures == 0 {
		c.BreakerFailures = 5
	}
	if c.BreakerBackoff == 0 {
		c.BreakerBackoff = time.Second
	}
	if c.Health == 0 {
		c.Health = 250 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

// Validate reports every invalid field at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, a...)...))
	}
	if len(c.Addrs) == 0 {
		bad("Addrs is empty: give at least one seed address (host:port)")
	}
	for _, a := range c.Addrs {
		_, port, err := net.SplitHostPort(a)
		switch n, nerr := strconv.ParseUint(port, 10, 64); {
		case err != nil || port == "":
			bad("address %q is not host:port", a)
		case nerr == nil && (n == 0 || n > 65535):
			bad("address %q: port %s is outside 1-65535", a, port)
		}
	}
	if c.Timeout < time.Millisecond || c.Timeout > time.Minute {
		bad("Timeout %v is outside [1ms, 1m]", c.Timeout)
	}
	if c.DialTimeout < time.Millisecond {
		bad("DialTimeout %v is below 1ms", c.DialTimeout)
	}
	if c.ChunkBytes < 4096 || c.ChunkBytes > 512<<20 {
		bad("ChunkBytes %d is outside [4096, 512 MiB]", c.ChunkBytes)
	}
	if c.BreakerFailures < 1 {
		bad("BreakerFailures %d must be at least 1", c.BreakerFailures)
	}
	if c.BreakerBackoff < 10*time.Millisecond || c.BreakerBackoff > maxBackoff {
		bad("BreakerBackoff %v is outside [10ms, %v]", c.BreakerBackoff, maxBackoff)
	}
	if c.Health < 10*time.Millisecond || c.Health > 10*time.Second {
		bad("Health %v is outside [10ms, 10s]", c.Health)
	}
	return errors.Join(errs...)
}
