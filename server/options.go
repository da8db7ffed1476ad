package server

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/resp"
)

// Defaults of the options beyond resp's limits.
const (
	defaultColdGetBatch      = 128
	defaultColdGetBatchBytes = 4 << 20
)

// Options configures a Server. Zero values take the defaults named in the
// comments (EnsureDefaults).
type Options struct {
	// UnixSocket is the path of the Unix socket; "" disables it (then TCP
	// must be set). Default "./tiercache.sock". At most 107 bytes.
	UnixSocket string
	// UnixMode is the socket file's permission bits. Default 0600.
	UnixMode fs.FileMode
	// UnixGroup, when > 0, is the group id the socket file is chowned to
	// (so members of that group may connect with mode 0660); 0 or -1 leave
	// the file's group as created (group 0 cannot be chosen).
	UnixGroup int
	// UnixRequireAuth makes Unix-socket clients AUTH too when RequirePass is set.
	UnixRequireAuth bool

	// TCPAddr enables a TCP listener ("127.0.0.1:6380"); "" (the default)
	// leaves TCP off. When on, RequirePass must be set.
	TCPAddr string
	// RequirePass is the AUTH password (required for TCP clients).
	RequirePass string
	// Listeners, when set, are served by Start instead of opening
	// UnixSocket and TCPAddr: listening sockets made by another process,
	// such as those systemd passes (cmd/tiercache). UnixSocket and TCPAddr
	// then only name them in INFO and CONFIG GET. The server owns them
	// from Start (S30).
	Listeners []Listener

	// Cluster makes the server answer as a one-node Redis Cluster that
	// owns all 16,384 slots (cluster.go, crossslot.go): CLUSTER SLOTS,
	// SHARDS, NODES..., and CROSSSLOT for a command whose keys hash to
	// more than one slot, on every connection. It needs a TCP listener,
	// whose address the node announces. Default off.
	Cluster bool
	// ClusterAnnounce is the address the node announces instead of the
	// TCP listener's: "ip", "ip:port" or ":port" (Redis's
	// cluster-announce-ip and cluster-announce-port), for clients that
	// reach the node through another address (NAT, a port mapping). ""
	// (the default) announces the listener's address, and for a listener
	// on every address (0.0.0.0, ::) the local address of each client's
	// connection.
	ClusterAnnounce string

	// MaxConns is the maximum number of open client connections. Default 10000.
	MaxConns int
	// MaxBulkBytes is the largest bulk string accepted. Default 512 MiB.
	MaxBulkBytes int
	// MaxArgs is the largest argument count of one command. Default 1<<20.
	MaxArgs int
	// MaxInlineBytes is the longest inline (non-RESP) command line. Default 64 KiB.
	MaxInlineBytes int
	// MaxQueryBytes bounds the bytes buffered for one command. Default 1 GiB.
	MaxQueryBytes int
	// MaxOutputBytes bounds the replies one connection holds unsent while
	// its client keeps writing requests without reading them (S12); above
	// it the connection is closed and a warning logged. Default 256 MiB.
	MaxOutputBytes int
	// ReadBufferBytes is each connection's initial read buffer, lent from
	// a pool while the connection reads (S17). Default 64 KiB: a pipeline
	// of 16 SETs of 1.5 KiB values (24.6 KiB) arrives in one read and is
	// answered in one write. With 16 KiB (redis-server's PROTO_IOBUF_LEN)
	// it took two reads and two writes, and the syscalls were half the
	// server's CPU per SET.
	ReadBufferBytes int
	// WriteBufferBytes is each connection's write buffer (16 pipelined
	// 1.5 KiB replies fit in one write). Default 32 KiB.
	WriteBufferBytes int

	// ColdGetBatch: after a GET that had to read the cold device, up to this
	// many GETs already received behind it on the same connection are
	// answered together (one MGet, so their device reads overlap) instead
	// of one device round trip each. At most ColdGetBatchBytes of values
	// are held at once. Default 128; -1 turns it off.
	ColdGetBatch int
	// ColdGetBatchBytes bounds the values one such batch holds in memory
	// (by the cache's recorded sizes; a longer run is answered in several
	// batches). Default 4 MiB.
	ColdGetBatchBytes int

	// MaxHashFields is the most fields one hash holds; a write that would
	// pass it is refused (S20). Default 1<<20.
	MaxHashFields int
	// MaxListElements bounds the elements of one list: a push past it is
	// refused and changes nothing (S22). Default 1,048,576.
	MaxListElements int
	// MaxSetMembers bounds the members of one set or sorted set: a write
	// past it is refused and changes nothing. Default 1,048,576.
	MaxSetMembers int
	// MaxValueBytes is the largest value (a string, or an aggregate's
	// encoding) a command builds; a longer one is refused before it is
	// allocated (S20). cmd/tiercache sets it to the cache's max_value.
	// Default 512 MiB (Redis's proto-max-bulk-len).
	MaxValueBytes int

	// BusyScriptTime is Redis's busy-reply-threshold (lua-time-limit): a
	// script running longer makes other clients' commands answer BUSY,
	// and SCRIPT KILL may end it. Default 5 s; negative: never busy (as
	// CONFIG SET busy-reply-threshold 0 here); CONFIG SET changes it.
	BusyScriptTime time.Duration

	// PubSubHardLimit, PubSubSoftLimit and PubSubSoftSeconds are Redis's
	// client-output-buffer-limit pubsub: a subscriber whose unread output
	// passes the hard limit, or the soft one for longer than the seconds,
	// is disconnected (counted, logged). 0 turns a limit off; all three 0
	// take the defaults, 32 MiB, 8 MiB, 60 s as Redis's (0, 0, -1: no
	// limit). CONFIG SET changes them.
	PubSubHardLimit, PubSubSoftLimit int64
	PubSubSoftSeconds                int
	// NotifyKeyspaceEvents is notify-keyspace-events: Redis's class
	// letters; "" (the default) publishes none. CONFIG SET changes it.
	NotifyKeyspaceEvents string
	// TrackingTableMaxKeys is tracking-table-max-keys: past it, client
	// tracking invalidates keys to make room. 0 takes the default,
	// 1,000,000; -1 is unbounded (Redis's tracking-table-max-keys 0, which
	// CONFIG GET then shows). CONFIG SET changes it.
	TrackingTableMaxKeys int
	// SlowlogLogSlowerThan and SlowlogMaxLen are Redis's
	// slowlog-log-slower-than (microseconds: a command that took at least
	// this long enters SLOWLOG; -1 none, 0 every one) and slowlog-max-len
	// (the entries kept). They are taken as given when SlowlogSet is;
	// unset, they are Redis's defaults, 10000 and 128. While the slow
	// log takes entries, commands are timed (one clock read per command
	// or pipelined run, S51) even without ObserveLatency. CONFIG SET
	// changes both.
	SlowlogLogSlowerThan int64
	SlowlogMaxLen        int64
	SlowlogSet           bool
	// LatencyMonitorThreshold, LatencyTracking and
	// LatencyTrackingInfoPercentiles are Redis's latency-monitor-threshold
	// (ms: a command that took at least this long is a LATENCY sample; 0
	// off), latency-tracking (per-command histograms for LATENCY HISTOGRAM
	// and INFO latencystats) and latency-tracking-info-percentiles (the
	// percentiles INFO latencystats shows, each within [0, 100]; none is
	// allowed). They are taken as given when LatencySet is; unset, they are
	// Redis's defaults, 0, on and 50 99 99.9 (S112). CONFIG SET changes
	// all three.
	LatencyMonitorThreshold        int64
	LatencyTracking                bool
	LatencyTrackingInfoPercentiles []float64
	LatencySet                     bool

	// Shutdown, when set, is what SHUTDOWN calls to stop the process (cmd/
	// stops as on SIGTERM: Close, then the cache's); SHUTDOWN closes the
	// connection without a reply, as Redis does. nil: SHUTDOWN answers an
	// error and changes nothing.
	Shutdown func()

	// ShutdownTimeout bounds how long Close waits for connections to finish
	// their current command. Default 5 s.
	ShutdownTimeout time.Duration

	// ObserveLatency, when set, is called once per command name at New and
	// returns the function that records n executions of duration d each
	// (pipelined commands observed together share their time, S51; cmd/
	// wires it to a Prometheus histogram). nil = no timing.
	ObserveLatency func(command string) func(d time.Duration, n int)

	// Version is reported by INFO and HELLO. Default "dev".
	Version string
	// DataDir and Durability are reported by CONFIG GET dir and INFO
	// persistence: the cold store's directory ("" without one) and the
	// cache's durability mode (cache, drain, writethrough).
	DataDir, Durability string

	// Logger defaults to zap.NewNop().
	Logger *zap.Logger

	// PoisonBigBuffers is a test seam: every off-heap buffer a big bulk
	// was received into (resp R6) or a big cold value was read into is
	// overwritten with resp.PoisonByte when it goes back, so that a value
	// still referring to one reads back wrong (S50).
	PoisonBigBuffers bool

	// noSetRun (tests) runs every SET through ReadCommand and dispatch
	// (S52's peer).
	noSetRun bool
}

// Listener is a listening socket for Options.Listeners.
type Listener struct {
	net.Listener
	// RequireAuth makes its clients AUTH first, as a TCP listener's do
	// (S7); it needs RequirePass.
	RequireAuth bool
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.UnixSocket == "" && o.TCPAddr == "" && len(o.Listeners) == 0 {
		o.UnixSocket = "./tiercache.sock"
	}
	if o.UnixMode == 0 {
		o.UnixMode = 0o600
	}
	if o.MaxConns == 0 {
		o.MaxConns = 10000
	}
	if o.MaxBulkBytes == 0 {
		o.MaxBulkBytes = resp.DefaultMaxBulk
	}
	if o.MaxArgs == 0 {
		o.MaxArgs = resp.DefaultMaxArgs
	}
	if o.MaxInlineBytes == 0 {
		o.MaxInlineBytes = resp.DefaultMaxInline
	}
	if o.MaxQueryBytes == 0 {
		o.MaxQueryBytes = resp.DefaultMaxQuery
	}
	if o.ReadBufferBytes == 0 {
		o.ReadBufferBytes = resp.DefaultReadBuffer
	}
	if o.MaxOutputBytes == 0 {
		o.MaxOutputBytes = 256 << 20
	}
	if o.ColdGetBatch == 0 {
		o.ColdGetBatch = defaultColdGetBatch
	}
	if o.ColdGetBatchBytes == 0 {
		o.ColdGetBatchBytes = defaultColdGetBatchBytes
	}
	if o.MaxHashFields == 0 {
		o.MaxHashFields = 1 << 20
	}
	if o.MaxValueBytes == 0 {
		o.MaxValueBytes = resp.DefaultMaxBulk
	}
	if o.WriteBufferBytes == 0 {
		o.WriteBufferBytes = 32 << 10
	}
	if o.MaxListElements == 0 {
		o.MaxListElements = 1 << 20
	}
	if o.MaxSetMembers == 0 {
		o.MaxSetMembers = 1 << 20
	}
	if o.BusyScriptTime == 0 {
		o.BusyScriptTime = 5 * time.Second
	}
	switch {
	case o.PubSubHardLimit == 0 && o.PubSubSoftLimit == 0 && o.PubSubSoftSeconds == 0:
		o.PubSubHardLimit, o.PubSubSoftLimit, o.PubSubSoftSeconds = 32<<20, 8<<20, 60
	case o.PubSubHardLimit == 0 && o.PubSubSoftLimit == 0 && o.PubSubSoftSeconds == -1:
		o.PubSubSoftSeconds = 0 // "0 0 0": no limit, asked for
	}
	if o.TrackingTableMaxKeys == 0 {
		o.TrackingTableMaxKeys = 1_000_000
	}
	if !o.SlowlogSet {
		o.SlowlogLogSlowerThan, o.SlowlogMaxLen, o.SlowlogSet = defaultSlowlogSlowerThan, defaultSlowlogMaxLen, true
	}
	if !o.LatencySet {
		o.LatencyMonitorThreshold, o.LatencyTracking, o.LatencySet = 0, true, true
		o.LatencyTrackingInfoPercentiles = slices.Clone(defaultLatencyPercentiles)
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = 5 * time.Second
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// maxUnixPath is sizeof(sockaddr_un.sun_path) - 1 on Linux (<sys/un.h>: 108).
const maxUnixPath = 107

// Validate reports every problem at once, wrapped in ErrInvalidOptions.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if o.UnixSocket == "" && o.TCPAddr == "" && len(o.Listeners) == 0 {
		bad("no listener: set a unix socket path or a TCP address")
	}
	for i, l := range o.Listeners {
		switch {
		case l.Listener == nil:
			bad("listener %d is nil", i)
		case l.RequireAuth && o.RequirePass == "":
			bad("listener %d (%s) requires AUTH but requirepass is empty", i, l.Addr())
		}
	}
	if len(o.UnixSocket) > maxUnixPath {
		bad("unix socket path %q is %d bytes, the limit is %d", o.UnixSocket, len(o.UnixSocket), maxUnixPath)
	}
	if o.UnixMode&^0o777 != 0 {
		bad("unix socket mode %o has bits outside 0777", o.UnixMode)
	}
	if o.UnixGroup < -1 {
		bad("unix socket group %d is negative", o.UnixGroup)
	}
	if o.TCPAddr != "" && o.RequirePass == "" {
		bad("TCP listener %s needs requirepass (TCP clients must AUTH)", o.TCPAddr)
	}
	errs = append(errs, o.validateCluster()...)
	if o.UnixRequireAuth && o.RequirePass == "" {
		bad("unix socket auth is on but requirepass is empty")
	}
	if o.MaxConns < 1 {
		bad("max connections %d must be at least 1", o.MaxConns)
	}
	if o.MaxBulkBytes < 1 {
		bad("max bulk bytes %d must be at least 1", o.MaxBulkBytes)
	}
	if o.MaxArgs < 1 {
		bad("max args %d must be at least 1", o.MaxArgs)
	}
	if o.MaxInlineBytes < 16 {
		bad("max inline bytes %d must be at least 16", o.MaxInlineBytes)
	}
	if o.MaxQueryBytes > math.MaxInt32 {
		bad("max query bytes %d is above 2 GiB - 1 (the reader's offsets are 32-bit)", o.MaxQueryBytes)
	}
	if o.MaxQueryBytes < o.MaxBulkBytes {
		bad("max query bytes %d is below max bulk bytes %d", o.MaxQueryBytes, o.MaxBulkBytes)
	}
	if o.MaxOutputBytes < 1<<20 {
		bad("max output buffer %d bytes is below 1 MiB", o.MaxOutputBytes)
	}
	if o.ReadBufferBytes < 512 {
		bad("read buffer %d bytes is below 512", o.ReadBufferBytes)
	}
	if o.WriteBufferBytes < 512 {
		bad("write buffer %d bytes is below 512", o.WriteBufferBytes)
	}
	if o.ColdGetBatch < -1 {
		bad("cold GET batch %d must be -1 (off) or positive", o.ColdGetBatch)
	}
	if o.ColdGetBatchBytes < 1 {
		bad("cold GET batch bytes %d must be positive", o.ColdGetBatchBytes)
	}
	if o.MaxHashFields < 1 {
		bad("max hash fields %d must be at least 1", o.MaxHashFields)
	}
	if o.MaxListElements < 1 {
		bad("max list elements %d must be at least 1", o.MaxListElements)
	}
	if o.MaxSetMembers < 1 {
		bad("max set members %d must be at least 1", o.MaxSetMembers)
	}
	if o.MaxValueBytes < 1 {
		bad("max value bytes %d must be at least 1", o.MaxValueBytes)
	}
	if o.PubSubHardLimit < 0 || o.PubSubSoftLimit < 0 || o.PubSubSoftSeconds < 0 {
		bad("pubsub output limits %d %d %d must not be negative", o.PubSubHardLimit, o.PubSubSoftLimit, o.PubSubSoftSeconds)
	}
	if _, ok := parseNotifyFlags(o.NotifyKeyspaceEvents); !ok {
		bad("notify-keyspace-events %q has a letter that is no class", o.NotifyKeyspaceEvents)
	}
	if o.TrackingTableMaxKeys < -1 {
		bad("tracking table max keys %d must be -1 (unbounded) or more", o.TrackingTableMaxKeys)
	}
	if o.SlowlogLogSlowerThan < -1 {
		bad("slowlog-log-slower-than %d must be -1 (off) or more", o.SlowlogLogSlowerThan)
	}
	if o.SlowlogMaxLen < 0 {
		bad("slowlog-max-len %d must not be negative", o.SlowlogMaxLen)
	}
	if o.LatencyMonitorThreshold < 0 {
		bad("latency-monitor-threshold %d must not be negative", o.LatencyMonitorThreshold)
	}
	if err := checkLatencyPercentiles(o.LatencyTrackingInfoPercentiles); err != nil {
		bad("latency-tracking-info-percentiles %v: %w", o.LatencyTrackingInfoPercentiles, err)
	}
	if o.ShutdownTimeout < 0 {
		bad("shutdown timeout %v is negative", o.ShutdownTimeout)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
}
