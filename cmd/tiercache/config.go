package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tiercache/tiercache/numa"
)

// Config is the sidecar's configuration: defaultConfig(), then the YAML
// file, then TIERCACHE_* environment variables, then flags. Every key is
// documented in configs/tiercache.yaml, which must parse to defaultConfig()
// (TestDefaultConfigFileMatchesDefaults).
type Config struct {
	Server     ServerConfig  `yaml:"server"`
	Hot        HotConfig     `yaml:"hot"`
	Warm       WarmConfig    `yaml:"warm"`
	Cold       ColdConfig    `yaml:"cold"`
	Remote     RemoteConfig  `yaml:"remote"`
	Flusher    FlusherConfig `yaml:"flusher"`
	Policy     PolicyConfig  `yaml:"policy"`
	Durability string        `yaml:"durability"`
	MaxValue   ByteSize      `yaml:"max_value"`
	// Tenants are named namespaces of the cache, each the keys that start
	// with its prefix (tier.Tenant). Environment: TIERCACHE_TENANTS as a
	// YAML flow sequence.
	Tenants []TenantConfig `yaml:"tenants"`
	Metrics MetricsConfig  `yaml:"metrics"`
	Logging LoggingConfig  `yaml:"logging"`

	// passed is what the service manager passed (C12), served instead of
	// server.socket and server.tcp; nil without socket activation. Not
	// configuration: cmdServe and startSidecarWith set it before build.
	passed *activation
}

// ServerConfig is the RESP listener.
type ServerConfig struct {
	Socket      string `yaml:"socket"`
	SocketMode  string `yaml:"socket_mode"`
	SocketGroup string `yaml:"socket_group"`
	TCP         string `yaml:"tcp"`
	RequirePass string `yaml:"requirepass"`
	UnixAuth    bool   `yaml:"unix_auth"`
	// Cluster is "" or "emulated" (server.Options.Cluster); environment
	// TIERCACHE_SERVER_CLUSTER.
	Cluster         string   `yaml:"cluster"`
	ClusterAnnounce string   `yaml:"cluster_announce"`
	MaxClients      int      `yaml:"max_clients"`
	MaxBulk         ByteSize `yaml:"max_bulk"`
	MaxArgs         int      `yaml:"max_args"`
	MaxInline       ByteSize `yaml:"max_inline"`
	MaxOutput       ByteSize `yaml:"max_output_buffer"`
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`
	Procs           int      `yaml:"procs"`
	GoMemoryLimit   string   `yaml:"go_memory_limit"`
	ColdGetBatch    int      `yaml:"cold_get_batch"`
	ColdGetBytes    ByteSize `yaml:"cold_get_batch_bytes"`
	MaxHashFields   int      `yaml:"max_hash_fields"`
	MaxListElements int      `yaml:"max_list_elements"`
	MaxSetMembers   int      `yaml:"max_set_members"`
	// Issue 33's runtime parameters (CONFIG SET changes them too).
	NotifyKeyspaceEvents string   `yaml:"notify_keyspace_events"`
	BusyScriptTime       Duration `yaml:"busy_script_time"`
	PubSubOutputLimit    string   `yaml:"pubsub_output_limit"`
	TrackingTableMaxKeys int      `yaml:"tracking_table_max_keys"`
	// Redis's slowlog-log-slower-than (µs; -1 off, 0 every command) and
	// slowlog-max-len (CONFIG SET changes them too).
	SlowlogLogSlowerThan int64 `yaml:"slowlog_log_slower_than"`
	SlowlogMaxLen        int64 `yaml:"slowlog_max_len"`
	// Redis's latency-monitor-threshold (ms; 0 off), latency-tracking and
	// latency-tracking-info-percentiles (Redis's form: numbers apart, each
	// within 0..100, "" none); CONFIG SET changes them too.
	LatencyMonitorThreshold        int64  `yaml:"latency_monitor_threshold"`
	LatencyTracking                bool   `yaml:"latency_tracking"`
	LatencyTrackingInfoPercentiles string `yaml:"latency_tracking_info_percentiles"`
}

// HotConfig is the DRAM tier.
type HotConfig struct {
	Bytes     ByteSize `yaml:"bytes"`
	MaxValue  ByteSize `yaml:"max_value"`
	HugePages bool     `yaml:"hugepages"`
}

// WarmConfig is the NUMA/CXL arena tier.
type WarmConfig struct {
	Bytes     ByteSize `yaml:"bytes"`
	Segment   ByteSize `yaml:"segment"`
	Node      string   `yaml:"node"`
	Policy    string   `yaml:"policy"`
	Mode      string   `yaml:"mode"`
	Fallback  string   `yaml:"fallback"`
	HugePages bool     `yaml:"hugepages"`
}

// ColdConfig is the KV store tier.
type ColdConfig struct {
	Backend  string   `yaml:"backend"`
	DataDir  string   `yaml:"data_dir"`
	Path     string   `yaml:"path"`
	Device   string   `yaml:"device"`
	Capacity ByteSize `yaml:"capacity"`
	// IOPoll and SQPoll (backend emulated or nvme): polled read rings
	// (the NVMe driver needs poll queues, nvme.poll_queues) and a kernel
	// submission thread for the main ring.
	IOPoll bool `yaml:"iopoll"`
	SQPoll bool `yaml:"sqpoll"`
	// StallAfter: a device I/O in flight this long is logged and counted
	// as stalled; 0 = off.
	StallAfter Duration `yaml:"stall_after"`
	// DirectoryKeys bounds the keys the in-memory directory remembers;
	// above it, keys held only in cold are forgotten until read again.
	// 0: with the emulated store every key only cold holds is forgotten
	// (tier T37); with a KV SSD, no bound.
	DirectoryKeys int64 `yaml:"directory_keys"`
	// IndexNode is the NUMA node the emulated store's off-heap index
	// tables are bound to: "auto" (warm's node when warm is bound to
	// one), "unbound" (or "none"), or a node id.
	IndexNode string `yaml:"index_node"`
	// Tenant namespaces (tenants' cold_bytes): the default namespace's
	// size in a new volume (0: what the tenants leave of capacity),
	// deleting at start the namespaces of tenants no longer configured,
	// a KV SSD's controller (default: cold.device's) and the file that
	// records the KV namespaces this host made.
	DefaultBytes       ByteSize `yaml:"default_bytes"`
	DropRemovedTenants bool     `yaml:"drop_removed_tenants"`
	Controller         string   `yaml:"controller"`
	NamespaceRegistry  string   `yaml:"namespace_registry"`
}

// RemoteConfig is the remote tier: an existing Redis Cluster, Valkey
// cluster or Redis server (7.0 or later) that every replica's sidecar
// shares. No addrs: no remote tier.
type RemoteConfig struct {
	// Addrs are seed addresses (host:port). Environment:
	// TIERCACHE_REMOTE_ADDRS, comma-separated.
	Addrs    AddrList        `yaml:"addrs"`
	Username string          `yaml:"username"`
	Password string          `yaml:"password"`
	TLS      RemoteTLSConfig `yaml:"tls"`
	// Prefix starts every key this deployment stores there.
	Prefix string `yaml:"prefix"`
	// Timeout bounds one round trip: a read past it is a miss.
	Timeout     Duration `yaml:"timeout"`
	DialTimeout Duration `yaml:"dial_timeout"`
	// Write is "behind" (changes are queued and sent in batches) or
	// "through" (a change waits for the remote's answer, at most wait).
	Write string   `yaml:"write"`
	Wait  Duration `yaml:"wait"`
	// ChunkBytes: larger values are stored in pieces of this size.
	ChunkBytes ByteSize `yaml:"chunk_bytes"`
	// The write-behind queue: at most queue_items changes and queue_bytes
	// (0: 64MiB) before the oldest is dropped; batches of batch_items,
	// closed after batch_delay.
	QueueItems int      `yaml:"queue_items"`
	QueueBytes ByteSize `yaml:"queue_bytes"`
	BatchItems int      `yaml:"batch_items"`
	BatchDelay Duration `yaml:"batch_delay"`
	// Resync is what happens to the local tiers' copies when
	// invalidations may have been lost: "revalidate" (each is checked
	// against the remote at its next use) or "keep".
	Resync string `yaml:"resync"`
}

// RemoteTLSConfig is the remote tier's TLS.
type RemoteTLSConfig struct {
	Enabled            bool   `yaml:"enabled"`
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// AddrList is a list of addresses: a YAML sequence, or one string of
// comma-separated addresses (as an environment variable gives it).
type AddrList []string

// UnmarshalYAML takes a sequence or a comma-separated scalar.
func (a *AddrList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*a = nil
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*a = append(*a, s)
			}
		}
		return nil
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return err
	}
	*a = l
	return nil
}

// FlusherConfig is the warm → cold pipeline.
type FlusherConfig struct {
	QueueItems int      `yaml:"queue_items"`
	QueueBytes ByteSize `yaml:"queue_bytes"`
	BatchItems int      `yaml:"batch_items"`
	BatchBytes ByteSize `yaml:"batch_bytes"`
	BatchDelay Duration `yaml:"batch_delay"`
	InFlight   int      `yaml:"in_flight"`
	Overload   string   `yaml:"overload"`
	Wait       Duration `yaml:"wait"`
}

// PolicyConfig is promotion and flash admission.
type PolicyConfig struct {
	PromoteHotHits   int      `yaml:"promote_hot_hits"`
	PromoteWarmHits  int      `yaml:"promote_warm_hits"`
	SizeUnit         ByteSize `yaml:"size_unit"`
	FlashBytesPerSec ByteSize `yaml:"flash_bytes_per_sec"`
	FlashRejectFirst bool     `yaml:"flash_reject_first"`
}

// TenantConfig is one tenant: its name, its key prefix and its quota of
// the DRAM budget (hot.bytes + warm.bytes).
type TenantConfig struct {
	Name   string   `yaml:"name"`
	Prefix string   `yaml:"prefix"`
	Quota  ByteSize `yaml:"quota"`
	// ColdBytes gives the tenant a cold namespace of its own of this
	// size (coldstore.TenantSpace.Bytes); 0 shares the default one.
	ColdBytes ByteSize `yaml:"cold_bytes"`
	// ColdNamespace takes an existing namespace instead: a volume
	// namespace's name, or a KV SSD namespace's NSID.
	ColdNamespace string `yaml:"cold_namespace"`
	// FlushWeight is the tenant's weighted share of the write-behind
	// flusher (tier.Tenant.FlushWeight; 0 weighs 1).
	FlushWeight int `yaml:"flush_weight"`
}

// MetricsConfig is the Prometheus endpoint.
type MetricsConfig struct {
	Listen string `yaml:"listen"`
	Pprof  bool   `yaml:"pprof"`
}

// LoggingConfig is zap's setup.
type LoggingConfig struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// defaultConfig is the embedded default: what `tiercache` runs with no
// configuration at all.
func defaultConfig() Config {
	return Config{
		Server: ServerConfig{Socket: "./tiercache.sock", SocketMode: "0600", MaxClients: 10000,
			MaxBulk: 512 << 20, MaxArgs: 1 << 20, MaxInline: 64 << 10, MaxOutput: 256 << 20, ShutdownTimeout: Duration(5e9),
			GoMemoryLimit: "auto", ColdGetBatch: 128, ColdGetBytes: 4 << 20, MaxHashFields: 1 << 20,
			MaxListElements: 1 << 20, MaxSetMembers: 1 << 20, BusyScriptTime: Duration(5e9), PubSubOutputLimit: "32MiB 8MiB 60",
			TrackingTableMaxKeys: 1_000_000, SlowlogLogSlowerThan: 10000, SlowlogMaxLen: 128,
			LatencyTracking: true, LatencyTrackingInfoPercentiles: "50 99 99.9"},
		Hot:  HotConfig{Bytes: 256 << 20, MaxValue: 1 << 20, HugePages: true},
		Warm: WarmConfig{Bytes: 256 << 20, Segment: 0, Node: "auto", Policy: "bind", Mode: "range", Fallback: "preferred"},
		Cold: ColdConfig{Backend: "emulated", DataDir: "./data", Capacity: 1 << 30, StallAfter: Duration(30e9), IndexNode: "auto"},
		Remote: RemoteConfig{Addrs: AddrList{}, Prefix: "tiercache:", Timeout: Duration(50e6), DialTimeout: Duration(1e9),
			Write: "behind", Wait: Duration(100e6), ChunkBytes: 1 << 20, QueueItems: 65536, BatchItems: 256,
			BatchDelay: Duration(1e6), Resync: "revalidate"},
		Flusher: FlusherConfig{QueueItems: 4096, QueueBytes: 0, BatchItems: 64, BatchBytes: 0,
			BatchDelay: Duration(2e6), InFlight: 8, Overload: "backpressure", Wait: Duration(2e9)},
		Policy:     PolicyConfig{PromoteHotHits: 2, PromoteWarmHits: 2, SizeUnit: 4 << 10},
		Durability: "cache",
		MaxValue:   512 << 20,
		Tenants:    []TenantConfig{},
		Metrics:    MetricsConfig{Listen: "127.0.0.1:9187"},
		Logging:    LoggingConfig{Level: "info", Format: "auto"},
	}
}

// loadFile merges a YAML file over c; unknown keys are errors.
func (c *Config) loadFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	return c.loadYAML(b, path)
}

func (c *Config) loadYAML(b []byte, name string) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", name, nameTypeErrors(b, err))
	}
	return nil
}

// envPrefix starts every environment override: TIERCACHE_<SECTION>_<KEY>,
// e.g. TIERCACHE_SERVER_SOCKET, TIERCACHE_WARM_BYTES, TIERCACHE_DURABILITY.
const envPrefix = "TIERCACHE_"

// applyEnv applies every TIERCACHE_* variable that names a config key:
// a string key takes the text as it is unless it starts with a quote (then
// a quoted YAML scalar), other keys' values are parsed like YAML scalars.
// It returns one error per bad value.
func (c *Config) applyEnv(environ []string) []error {
	fields := map[string]reflect.Value{}
	collectFields(reflect.ValueOf(c).Elem(), envPrefix, fields)
	var errs []error
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		f, ok := fields[name]
		if !ok {
			continue
		}
		if f.Kind() == reflect.String && !strings.HasPrefix(val, `"`) && !strings.HasPrefix(val, "'") {
			f.SetString(val) // the text as it is: "p@ss #1" keeps its " #1", which YAML reads as a comment
			continue
		}
		var node yaml.Node
		err := yaml.Unmarshal([]byte(val), &node)
		if f.Kind() == reflect.String && (err != nil || len(node.Content) == 0 || node.Content[0].Kind != yaml.ScalarNode) {
			f.SetString(val) // a quote that does not make one YAML scalar: the text as it is
			continue
		}
		if err != nil || len(node.Content) == 0 {
			errs = append(errs, fmt.Errorf("%s=%q: not a value", name, val))
			continue
		}
		scalar := node.Content[0]
		if f.Kind() == reflect.String {
			scalar.Tag = "!!str" // "0600" and "off" stay strings
		}
		if err := scalar.Decode(f.Addr().Interface()); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %v", name, val, err))
		}
	}
	return errs
}

func collectFields(v reflect.Value, prefix string, out map[string]reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		name := prefix + strings.ToUpper(tag)
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			collectFields(f, name+"_", out)
			continue
		}
		out[name] = f
	}
}

// socketMode parses server.socket_mode ("0600").
func (c *Config) socketMode() (os.FileMode, error) {
	m, err := strconv.ParseUint(c.Server.SocketMode, 8, 32)
	if err != nil || m > 0o777 {
		return 0, fmt.Errorf("server.socket_mode %q is not an octal mode like 0600", c.Server.SocketMode)
	}
	return os.FileMode(m), nil
}

// socketGroup resolves server.socket_group (a name or a gid; "" = none).
func (c *Config) socketGroup() (int, error) {
	g := c.Server.SocketGroup
	if g == "" {
		return -1, nil
	}
	if id, err := strconv.Atoi(g); err == nil && id >= 0 {
		return id, nil
	}
	grp, err := user.LookupGroup(g)
	if err != nil {
		return 0, fmt.Errorf("server.socket_group %q: %v", g, err)
	}
	return strconv.Atoi(grp.Gid)
}

// warmNode parses warm.node: "auto", "unbound" or a node id.
func (c *Config) warmNode() (int, error) { return parseNode("warm.node", c.Warm.Node) }

// coldIndexNode parses cold.index_node as warm.node is parsed ("auto"
// then means warm's node, coldstore.Config.IndexNode).
func (c *Config) coldIndexNode() (int, error) { return parseNode("cold.index_node", c.Cold.IndexNode) }

// parseNode parses a NUMA node setting named key: "auto" (or "") is
// numa.AutoNode, "unbound" or "none" numa.Unbound, else a node id.
func parseNode(key, v string) (int, error) {
	switch strings.ToLower(v) {
	case "auto", "":
		return numa.AutoNode, nil
	case "unbound", "none":
		return numa.Unbound, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not auto, unbound or a node id", key, v)
	}
	return n, nil
}
