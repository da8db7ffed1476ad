package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/server"
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/uring"
)

// built is a Config turned into the packages' Options.
type built struct {
	server server.Options
	tier   tier.Options
	// cold is the cold store's config (nil: cold.backend none); tier's
	// OpenCold opens it as it is when the cache opens.
	cold *coldstore.Config
	// memLimit: -1 follows the cache's heap budget ("auto"), 0 leaves Go's
	// limit alone ("off"), else a fixed limit in bytes.
	memLimit int64
}

// build converts c and validates everything; the error lists every problem
// (config-level and each package's Validate) in one message.
func (c *Config) build(log *zap.Logger) (*built, error) {
	var errs []error
	bad := func(err error) { errs = append(errs, err) }
	b := &built{}

	mode, err := c.socketMode()
	if err != nil {
		bad(err)
	}
	gid, err := c.socketGroup()
	if err != nil {
		bad(err)
	}
	b.server = server.Options{
		UnixSocket: c.Server.Socket, UnixMode: mode, UnixGroup: gid, UnixRequireAuth: c.Server.UnixAuth,
		TCPAddr: c.Server.TCP, RequirePass: c.Server.RequirePass, MaxConns: c.Server.MaxClients,
		Cluster: c.Server.Cluster == "emulated", ClusterAnnounce: c.Server.ClusterAnnounce,
		MaxBulkBytes: int(c.Server.MaxBulk), MaxArgs: c.Server.MaxArgs, MaxInlineBytes: int(c.Server.MaxInline),
		ShutdownTimeout: time.Duration(c.Server.ShutdownTimeout), Version: version, Logger: log,
		ColdGetBatch: c.Server.ColdGetBatch, ColdGetBatchBytes: int(min(c.Server.ColdGetBytes, 1<<40)),
		MaxOutputBytes: int(min(c.Server.MaxOutput, 1<<40)),
		DataDir:        c.Cold.DataDir, Durability: c.Durability,
		MaxHashFields: c.Server.MaxHashFields, MaxListElements: c.Server.MaxListElements, MaxValueBytes: int(min(c.MaxValue, 1<<40)),
		MaxSetMembers: c.Server.MaxSetMembers,
	}
	if c.passed != nil {
		if err := c.passed.apply(&b.server); err != nil {
			bad(err)
		}
	}
	b.server.NotifyKeyspaceEvents = c.Server.NotifyKeyspaceEvents
	b.server.BusyScriptTime = time.Duration(c.Server.BusyScriptTime)
	b.server.TrackingTableMaxKeys = c.Server.TrackingTableMaxKeys
	b.server.SlowlogLogSlowerThan, b.server.SlowlogMaxLen, b.server.SlowlogSet = c.Server.SlowlogLogSlowerThan, c.Server.SlowlogMaxLen, true
	if c.Server.SlowlogLogSlowerThan < -1 {
		bad(fmt.Errorf("server.slowlog_log_slower_than %d: must be -1 (off), 0 (every command) or more microseconds", c.Server.SlowlogLogSlowerThan))
		b.server.SlowlogLogSlowerThan = -1
	}
	if c.Server.SlowlogMaxLen < 0 {
		bad(fmt.Errorf("server.slowlog_max_len %d: must not be negative", c.Server.SlowlogMaxLen))
		b.server.SlowlogMaxLen = 0
	}
	c.buildLatency(&b.server, bad)
	if err := pubsubLimit(c.Server.PubSubOutputLimit, &b.server); err != nil {
		bad(err)
	}
	if !server.NotifyKeyspaceEventsValid(c.Server.NotifyKeyspaceEvents) {
		bad(fmt.Errorf("server.notify_keyspace_events %q: a letter is no class of Redis's notify-keyspace-events (Ag$lshzxeKEtmdn)", c.Server.NotifyKeyspaceEvents))
		b.server.NotifyKeyspaceEvents = "" // said once
	}
	if c.Server.ShutdownTimeout < 0 {
		bad(fmt.Errorf("server.shutdown_timeout %v must not be negative (0 takes the default)", c.Server.ShutdownTimeout))
		b.server.ShutdownTimeout = 0
	}
	if c.Server.MaxBulk > resp.DefaultMaxQuery {
		bad(fmt.Errorf("server.max_bulk %v: at most %v, the most one request may hold", c.Server.MaxBulk, ByteSize(resp.DefaultMaxQuery)))
		b.server.MaxBulkBytes = 0
	}
	switch {
	case c.Server.BusyScriptTime < 0:
		bad(fmt.Errorf("server.busy_script_time %v must not be negative (0: scripts are never busy)", time.Duration(c.Server.BusyScriptTime)))
		b.server.BusyScriptTime = 0 // the default: said once
	case c.Server.BusyScriptTime == 0:
		b.server.BusyScriptTime = -1 // never busy, as CONFIG SET busy-reply-threshold 0 (the server's 0 is its default)
	}
	// 0 takes the default (server.Options.EnsureDefaults); below it is
	// refused here, by the key's name, and the server is given the default
	// so the problem is said once.
	for _, k := range []struct {
		name     string
		v, least int
		field    *int
	}{
		{"max_clients", c.Server.MaxClients, 1, &b.server.MaxConns},
		{"max_args", c.Server.MaxArgs, 1, &b.server.MaxArgs},
		{"max_inline", int(c.Server.MaxInline), 16, &b.server.MaxInlineBytes},
	} {
		switch {
		case k.v != 0 && k.v < k.least:
			bad(fmt.Errorf("server.%s %d: must be at least %d (0 takes the default)", k.name, k.v, k.least))
			*k.field = 0
		}
	}
	switch {
	case c.Server.TrackingTableMaxKeys < 0:
		bad(fmt.Errorf("server.tracking_table_max_keys %d: must not be negative (0: unbounded)", c.Server.TrackingTableMaxKeys))
		b.server.TrackingTableMaxKeys = 0 // the default: said once
	case c.Server.TrackingTableMaxKeys == 0:
		b.server.TrackingTableMaxKeys = -1 // unbounded, as tracking-table-max-keys 0 (the server's 0 is its default)
	}
	if c.Server.MaxHashFields < 1 {
		bad(fmt.Errorf("server.max_hash_fields %d: must be at least 1", c.Server.MaxHashFields))
		b.server.MaxHashFields = 1
	}
	if c.Server.MaxListElements < 1 {
		bad(fmt.Errorf("server.max_list_elements %d: must be at least 1", c.Server.MaxListElements))
		b.server.MaxListElements = 1
	}
	if c.Server.MaxSetMembers < 1 {
		bad(fmt.Errorf("server.max_set_members %d: must be at least 1", c.Server.MaxSetMembers))
		b.server.MaxSetMembers = 1
	}
	if c.Server.MaxOutput < 1<<20 {
		bad(fmt.Errorf("server.max_output_buffer %v: must be at least 1MiB", c.Server.MaxOutput))
		b.server.MaxOutputBytes = 1 << 20
	}
	if c.Server.ColdGetBatch == 0 {
		b.server.ColdGetBatch = -1 // off
	}
	if c.Server.ColdGetBatch < 0 {
		bad(fmt.Errorf("server.cold_get_batch %d: must be 0 (off) or the most GETs answered together", c.Server.ColdGetBatch))
		b.server.ColdGetBatch = -1
	}
	if c.Server.ColdGetBytes < 1 {
		bad(fmt.Errorf("server.cold_get_batch_bytes %v: must be at least 1 byte", c.Server.ColdGetBytes))
		b.server.ColdGetBatchBytes = 1
	}
	servesTCP := c.Server.TCP != ""
	if c.passed != nil { // the passed sockets replace server.socket and server.tcp
		servesTCP = c.passed.tcp != nil
	}
	switch {
	case c.Server.Cluster != "" && c.Server.Cluster != "emulated":
		bad(fmt.Errorf("server.cluster %q: must be \"\" (off) or \"emulated\" (a one-node cluster for cluster-mode clients)", c.Server.Cluster))
	case c.Server.Cluster == "emulated" && !servesTCP:
		bad(errors.New("server.cluster emulated needs server.tcp (or, under systemd, a TCP socket passed as " + tcpFdName + "): cluster-mode clients connect over TCP, to the address the node announces"))
		b.server.Cluster = false // said once
	}
	if c.Server.Socket == "" && c.Server.TCP == "" {
		bad(errors.New("server.socket and server.tcp are both empty: nothing to listen on"))
	}
	if c.Server.Procs < 0 {
		bad(fmt.Errorf("server.procs %d: must be 0 (every CPU the process may use) or a number of CPUs", c.Server.Procs))
	}
	switch l := c.Server.GoMemoryLimit; l {
	case "auto", "":
		b.memLimit = -1
	case "off":
	default:
		n, err := ParseByteSize(l)
		if err != nil || n < 16<<20 {
			bad(fmt.Errorf("server.go_memory_limit %q: must be auto, off or a size of at least 16MiB", l))
		}
		b.memLimit = int64(n)
	}
	if c.Server.TCP != "" {
		if err := checkListenAddr(c.Server.TCP); err != nil {
			bad(fmt.Errorf("server.tcp %q: %w", c.Server.TCP, err))
		}
	}
	if l := c.Metrics.Listen; l != "" && l != "off" {
		if err := checkListenAddr(l); err != nil {
			bad(fmt.Errorf("metrics.listen %q: %w", l, err))
		}
	}
	if c.Server.MaxBulk < c.MaxValue {
		bad(fmt.Errorf("server.max_bulk %v is below max_value %v: the largest value could not be sent", c.Server.MaxBulk, c.MaxValue))
	}
	so := b.server
	so.EnsureDefaults()
	if err := so.Validate(); err != nil {
		bad(err)
	}

	node, err := c.warmNode()
	if err != nil {
		bad(err)
	}
	pol, err := numa.ParsePolicy(c.Warm.Policy)
	if err != nil {
		bad(fmt.Errorf("warm.policy: %w", err))
	}
	pmode, err := numa.ParseMode(c.Warm.Mode)
	if err != nil {
		bad(fmt.Errorf("warm.mode: %w", err))
	}
	fb, err := numa.ParseFallback(c.Warm.Fallback)
	if err != nil {
		bad(fmt.Errorf("warm.fallback: %w", err))
	}
	indexNode, err := c.coldIndexNode()
	if err != nil {
		bad(err)
	}
	switch c.Cold.Backend {
	case "emulated", "passthrough", "none":
	case "nvme":
		if err := checkCharDevice(c.Cold.Device); err != nil {
			bad(err)
		}
	default:
		bad(fmt.Errorf("cold.backend %q is not emulated, nvme, passthrough or none", c.Cold.Backend))
	}
	if (c.Cold.IOPoll || c.Cold.SQPoll) && c.Cold.Backend != "nvme" && c.Cold.Backend != "emulated" {
		bad(fmt.Errorf("cold.iopoll and cold.sqpoll apply to cold.backend emulated or nvme, not %s", c.Cold.Backend))
	}
	switch c.Logging.Level {
	case "debug", "info", "warn", "error":
	default:
		bad(fmt.Errorf("logging.level %q is not debug, info, warn or error", c.Logging.Level))
	}
	switch c.Logging.Format {
	case "auto", "json", "console":
	default:
		bad(fmt.Errorf("logging.format %q is not auto, json or console", c.Logging.Format))
	}

	to := tier.Options{
		HotBytes: int64(c.Hot.Bytes), HotMaxValue: int(c.Hot.MaxValue), HotNoHugePages: !c.Hot.HugePages,
		MaxValue: int(c.MaxValue), Durability: tier.Durability(c.Durability), Logger: log,
	}
	to.WarmBytes = int64(c.Warm.Bytes)
	to.WarmSegmentBytes = int(min(c.Warm.Segment, 1<<40))
	// A segment costs about 70 bytes of Go heap (dram.Log's bookkeeping):
	// below 4KiB that is more than 2% of it, and a 1-byte segment makes
	// warm.bytes' worth of them before the socket answers. dram.Options
	// takes at most 1GiB.
	if s := c.Warm.Segment; s != 0 && (s < 4<<10 || s > 1<<30) {
		bad(fmt.Errorf("warm.segment %v: must be 0 (a 64th of warm.bytes within 64KiB-4MiB) or from 4KiB to 1GiB", s))
		to.WarmSegmentBytes = 0 // said once
	} else if s != 0 && c.Warm.Bytes/s > maxWarmSegments {
		bad(fmt.Errorf("warm.segment %v makes %d segments of warm.bytes %v: at most %d (about 70 bytes of heap each); take a larger segment or 0",
			s, c.Warm.Bytes/s, c.Warm.Bytes, maxWarmSegments))
		to.WarmSegmentBytes = 0
	}
	to.WarmArena = numa.ArenaOptions{Node: node, Policy: pol, Mode: pmode, Fallback: fb, HugePages: c.Warm.HugePages, Logger: log}
	cc := coldstore.Config{Mode: c.Cold.Backend, Device: c.Cold.Device, IOPoll: c.Cold.IOPoll, SQPoll: c.Cold.SQPoll,
		Capacity: int64(c.Cold.Capacity), IndexNode: indexNode, DataDir: c.Cold.DataDir, DefaultBytes: int64(min(c.Cold.DefaultBytes, 1<<62)),
		DropRemoved: c.Cold.DropRemovedTenants, Controller: c.Cold.Controller, Registry: c.Cold.NamespaceRegistry,
		Cut: server.ColdCut}
	for _, t := range c.Tenants {
		if t.ColdBytes > 0 || t.ColdNamespace != "" {
			cc.Tenants = append(cc.Tenants, coldstore.TenantSpace{Name: t.Name, Bytes: int64(min(t.ColdBytes, 1<<62)), Namespace: t.ColdNamespace})
		}
	}
	if len(cc.Tenants) > 0 && c.Cold.Backend == "none" {
		bad(errors.New("tenants' cold_bytes and cold_namespace need a cold tier (cold.backend is none)"))
	}
	if c.Cold.Backend == "emulated" {
		cc.Path = c.Cold.Path
	}
	switch k := c.Cold.DirectoryKeys; {
	case k < 0:
		bad(fmt.Errorf("cold.directory_keys %d must be 0 (no bound) or positive", k))
	case k > 0 && c.Cold.Backend == "none":
		bad(fmt.Errorf("cold.directory_keys %d needs a cold tier (cold.backend is none): only keys held in cold can be forgotten", k))
	default:
		to.MaxKeys = k
	}
	switch d := time.Duration(c.Cold.StallAfter); {
	case d == 0:
		cc.StallAfter = -1 // off
	case d < uring.MinStallAfter:
		bad(fmt.Errorf("cold.stall_after %v must be 0 (off) or at least %v", d, uring.MinStallAfter))
	default:
		cc.StallAfter = d
	}
	if c.Cold.Backend != "none" {
		b.cold = &cc
		if err := cc.Validate(); err != nil {
			bad(err)
		}
		to.OpenCold = func(p backend.Params) (backend.Store, error) { return coldstore.Open(*b.cold, p) }
	}
	to.Flusher.QueueItems = c.Flusher.QueueItems
	to.Flusher.QueueBytes = int64(c.Flusher.QueueBytes)
	to.Flusher.BatchItems = c.Flusher.BatchItems
	to.Flusher.BatchBytes = int64(c.Flusher.BatchBytes)
	to.Flusher.BatchDelay = time.Duration(c.Flusher.BatchDelay)
	to.Flusher.InFlight = c.Flusher.InFlight
	if to.Flusher.Overload, err = flusher.ParseOverload(c.Flusher.Overload); err != nil {
		bad(fmt.Errorf("flusher.overload %q must be backpressure or shed", c.Flusher.Overload))
	}
	switch d := time.Duration(c.Flusher.Wait); {
	case d <= 0:
		bad(fmt.Errorf("flusher.wait %v must be positive", d))
	default:
		to.Flusher.Wait = d
	}
	to.Promotion.HotHits = c.Policy.PromoteHotHits
	to.Promotion.WarmHits = c.Policy.PromoteWarmHits
	to.Promotion.SizeUnit = int(c.Policy.SizeUnit)
	to.Flash.BytesPerSec = int64(c.Policy.FlashBytesPerSec)
	to.Flash.RejectFirst = c.Policy.FlashRejectFirst
	for _, t := range c.Tenants { // tier's Validate checks them (Tenants[i] is tenants[i])
		to.Tenants = append(to.Tenants, tier.Tenant{Name: t.Name, Prefix: t.Prefix, Quota: int64(min(t.Quota, 1<<62)), FlushWeight: t.FlushWeight})
	}
	errs = append(errs, c.buildRemote(&to, log)...)
	b.tier = to
	vt := to
	vt.EnsureDefaults()
	if err := vt.Validate(); err != nil {
		bad(err)
	}
	if b.cold != nil { // the flusher is made when the cold store opens: check it now (C2)
		fo := vt.Flusher
		fo.EnsureDefaults()
		if err := fo.ValidateTuning(); err != nil {
			bad(err)
		}
	}
	if len(errs) > 0 {
		return nil, &configError{errs: errs}
	}
	return b, nil
}

// maxWarmSegments bounds warm.bytes / warm.segment: 16Mi segments are
// about 1.1GiB of dram.Log bookkeeping (64GiB of warm at 4KiB segments).
const maxWarmSegments = 1 << 24

// checkListenAddr checks the form of a TCP listen address, host:port (a
// numeric port at most 65535), so that a malformed one is a configuration
// error (C2), not a failed listen after the start began. Whether it can be
// bound is the listen's to say.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("not host:port")
	}
	if _, err := strconv.ParseUint(port, 10, 64); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return fmt.Errorf("port %s is above 65535", port)
		}
	}
	return nil
}

// configError lists every configuration problem, one per line.
type configError struct{ errs []error }

func (e *configError) Error() string {
	var lines []string
	for _, err := range e.errs {
		for _, l := range strings.Split(err.Error(), "\n") {
			lines = append(lines, "  - "+l)
		}
	}
	if len(lines) == 1 {
		return "invalid configuration: " + strings.TrimPrefix(lines[0], "  - ")
	}
	return fmt.Sprintf("invalid configuration (%d problems):\n%s", len(lines), strings.Join(lines, "\n"))
}

func (e *configError) Unwrap() []error { return e.errs }

// checkCharDevice is cold.device for cold.backend nvme: it must exist and
// be a character device (the NVMe generic char device /dev/ngXnY).
func checkCharDevice(p string) error {
	if p == "" {
		return errors.New("cold.backend nvme needs cold.device, the NVMe namespace's generic char device (/dev/ngXnY)")
	}
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("cold.device %s: %w (cold.backend nvme needs the NVMe namespace's generic char device /dev/ngXnY)", p, err)
	}
	if st.Mode()&os.ModeCharDevice == 0 || st.Mode()&os.ModeDevice == 0 {
		return fmt.Errorf("cold.device %s is not a character device (it is %s): cold.backend nvme needs the generic char device /dev/ngXnY, not the block device /dev/nvmeXnY or a file", p, kindOf(st.Mode()))
	}
	return nil
}

func kindOf(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "not a device"
}

// pubsubLimit reads server.pubsub_output_limit, "HARD SOFT SECONDS" (sizes
// as ByteSize reads them), into the server's options.
func pubsubLimit(v string, o *server.Options) error {
	f := strings.Fields(v)
	if len(f) != 3 {
		return fmt.Errorf("server.pubsub_output_limit %q: want \"HARD SOFT SECONDS\", e.g. \"32MiB 8MiB 60\"", v)
	}
	var hard, soft ByteSize
	if err := hard.Set(f[0]); err != nil {
		return fmt.Errorf("server.pubsub_output_limit hard %q: %w", f[0], err)
	}
	if err := soft.Set(f[1]); err != nil {
		return fmt.Errorf("server.pubsub_output_limit soft %q: %w", f[1], err)
	}
	secs, err := strconv.Atoi(f[2])
	if err != nil || secs < 0 {
		return fmt.Errorf("server.pubsub_output_limit seconds %q: want a whole number of seconds", f[2])
	}
	o.PubSubHardLimit, o.PubSubSoftLimit, o.PubSubSoftSeconds = int64(hard), int64(soft), secs
	if hard == 0 && soft == 0 && secs == 0 {
		o.PubSubSoftSeconds = -1 // all off (0 0 0 would take the defaults)
	}
	return nil
}

// buildLatency passes the latency settings to the server, each bad one
// said by its key and value (the server is given its default, so that it
// is said once).
func (c *Config) buildLatency(o *server.Options, bad func(error)) {
	o.LatencySet, o.LatencyMonitorThreshold, o.LatencyTracking = true, c.Server.LatencyMonitorThreshold, c.Server.LatencyTracking
	if c.Server.LatencyMonitorThreshold < 0 {
		bad(fmt.Errorf("server.latency_monitor_threshold %d: must be 0 (off) or more milliseconds", c.Server.LatencyMonitorThreshold))
		o.LatencyMonitorThreshold = 0
	}
	ps, err := server.ParseLatencyPercentiles(c.Server.LatencyTrackingInfoPercentiles)
	if err != nil {
		bad(fmt.Errorf("server.latency_tracking_info_percentiles %q: %w (numbers apart, each within 0..100)", c.Server.LatencyTrackingInfoPercentiles, err))
	}
	o.LatencyTrackingInfoPercentiles = ps
}
