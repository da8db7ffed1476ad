package main

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestDefaultConfigFileMatchesDefaults: configs/tiercache.yaml sets every
// key, to exactly the embedded default.
func TestDefaultConfigFileMatchesDefaults(t *testing.T) {
	var c Config
	if err := c.loadFile("../../configs/tiercache.yaml"); err != nil {
		t.Fatal(err)
	}
	if want := defaultConfig(); !reflect.DeepEqual(c, want) {
		t.Fatalf("configs/tiercache.yaml parses to\n%+v\nthe embedded default is\n%+v", c, want)
	}
}

func TestExampleConfigsAreValid(t *testing.T) {
	for _, f := range []string{"cxl.yaml", "kvssd.yaml", "tenants.yaml"} {
		c := defaultConfig()
		if err := c.loadFile("../../configs/" + f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c.Server.SocketGroup = "" // the example group need not exist here
		if _, err := c.build(zap.NewNop()); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestNVMeConfig: configs/nvme.yaml is valid once its device is a char
// device (/dev/null stands in), and cold.backend nvme refuses a missing
// device, a regular file and an empty cold.device with a clear error.
func TestNVMeConfig(t *testing.T) {
	load := func(dev string) error {
		c := defaultConfig()
		if err := c.loadFile("../../configs/nvme.yaml"); err != nil {
			t.Fatal(err)
		}
		if c.Cold.Backend != "nvme" {
			t.Fatalf("configs/nvme.yaml has cold.backend %q", c.Cold.Backend)
		}
		c.Cold.Device = dev
		_, err := c.build(zap.NewNop())
		return err
	}
	if err := load("/dev/null"); err != nil {
		t.Fatalf("configs/nvme.yaml with a char device: %v", err)
	}
	file := t.TempDir() + "/f"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for dev, want := range map[string]string{
		"/dev/ng-missing": "cold.device /dev/ng-missing: stat /dev/ng-missing: no such file or directory",
		file:              "is not a character device (it is a regular file)",
		"":                "cold.backend nvme needs cold.device",
	} {
		if err := load(dev); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cold.device %q: %v, want an error saying %q", dev, err, want)
		}
	}
}

func TestInvalidConfigListsEveryProblem(t *testing.T) {
	c := defaultConfig()
	err := c.loadYAML([]byte(`
server:
  socket_mode: "999"
  tcp: 127.0.0.1:7000
  procs: -2
  cold_get_batch: -1
  cold_get_batch_bytes: 0
  max_list_elements: 0
  busy_script_time: -1s
  max_clients: -1
  max_args: -2
  max_inline: 8
  tracking_table_max_keys: -5
  slowlog_log_slower_than: -2
  slowlog_max_len: -1
warm:
  node: left
  policy: sideways
  fallback: maybe
cold:
  backend: tape
durability: eventually
logging:
  level: loud
flusher:
  in_flight: 65
  batch_items: -3
metrics:
  listen: notanaddr
remote:
  addrs: [127.0.0.1:99999, "127.0.0.1:0", nocolon]
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.build(zap.NewNop())
	var ce *configError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"socket_mode", "requirepass", "server.procs", "server.cold_get_batch ",
		"server.cold_get_batch_bytes", "server.max_list_elements", "server.busy_script_time",
		"server.max_clients -1", "server.max_args -2", "server.max_inline 8", "server.tracking_table_max_keys -5",
		"server.slowlog_log_slower_than -2", "server.slowlog_max_len -1", "warm.node", "warm.policy", "warm.fallback",
		"cold.backend", "Durability", "logging.level", "InFlight 65", "BatchItems -3", "metrics.listen",
		`"127.0.0.1:99999": port 99999 is outside 1-65535`, `"127.0.0.1:0": port 0`, `"nocolon" is not host:port`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestListenAddressForm (C2): a malformed listen address is refused with
// the configuration, not by a failed listen after the start began.
func TestListenAddressForm(t *testing.T) {
	for _, tc := range []struct {
		tcp, metrics string
		want         string
	}{
		{"127.0.0.1:99999", "", "server.tcp"},
		{"", "localhost", "metrics.listen"},
		{"127.0.0.1:6380", "127.0.0.1:0", ""},
		{"[::1]:6380", "off", ""},
	} {
		c := defaultConfig()
		c.Server.TCP, c.Server.RequirePass, c.Metrics.Listen = tc.tcp, "x", tc.metrics
		_, err := c.build(zap.NewNop())
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("tcp %q, metrics %q: %v, want %q", tc.tcp, tc.metrics, err, tc.want)
		}
	}
}

func TestUnknownKeyIsAnError(t *testing.T) {
	c := defaultConfig()
	if err := c.loadYAML([]byte("server:\n  sokcet: /x\n"), "test"); err == nil || !strings.Contains(err.Error(), "sokcet") {
		t.Fatalf("unknown key: %v", err)
	}
	if err := c.loadYAML([]byte("hot:\n  bytes: lots\n"), "test"); err == nil || !strings.Contains(err.Error(), "not a size") {
		t.Fatalf("bad size: %v", err)
	}
}

func TestEnvAndFlagsOverride(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "c-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("server:\n  socket: /tmp/file.sock\nhot:\n  bytes: 32MiB\ndurability: drain\n")
	f.Close()
	env := []string{"TIERCACHE_CONFIG=" + f.Name(), "TIERCACHE_HOT_BYTES=48MiB", "TIERCACHE_SERVER_SOCKET_MODE=0660",
		"TIERCACHE_WARM_HUGEPAGES=true", "TIERCACHE_FLUSHER_BATCH_DELAY=5ms", "TIERCACHE_NO_SKIP=1", "PATH=/bin"}
	c, err := loadConfig("serve", []string{"-socket", "/tmp/flag.sock", "-warm-bytes", "128MiB"}, env, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  []string
		want int
	}{{nil, nil, 0}, {nil, []string{"TIERCACHE_SERVER_PROCS=3"}, 3}, {[]string{"-procs", "1"}, []string{"TIERCACHE_SERVER_PROCS=3"}, 1}} {
		pc, err := loadConfig("serve", tc.args, tc.env, os.Stderr)
		if err != nil || pc.Server.Procs != tc.want {
			t.Fatalf("procs from %q %q: %v, %v; want %d", tc.args, tc.env, pc, err, tc.want)
		}
	}
	if c.Server.Socket != "/tmp/flag.sock" || c.Hot.Bytes != 48<<20 || c.Durability != "drain" ||
		c.Server.SocketMode != "0660" || !c.Warm.HugePages || c.Flusher.BatchDelay != Duration(5e6) || c.Warm.Bytes != 128<<20 {
		t.Fatalf("merged config: %+v", c)
	}
	_, err = loadConfig("serve", nil, []string{"TIERCACHE_HOT_BYTES=huge", "TIERCACHE_SERVER_MAX_CLIENTS=many"}, os.Stderr)
	if err == nil || !strings.Contains(err.Error(), "TIERCACHE_HOT_BYTES") || !strings.Contains(err.Error(), "TIERCACHE_SERVER_MAX_CLIENTS") {
		t.Fatalf("bad env values: %v", err)
	}
}

// TestEnvRemote: the remote section from the environment: addrs as a
// comma-separated list, a prefix ending in a colon (taken as it is), a
// quoted password, an unquoted one with " #" in it (as it is, not cut at
// YAML's comment); and a bad write policy is an error.
func TestEnvRemote(t *testing.T) {
	env := []string{"TIERCACHE_REMOTE_ADDRS=10.0.0.5:6379, 10.0.0.6:6379", "TIERCACHE_REMOTE_PREFIX=bench1:",
		"TIERCACHE_REMOTE_PASSWORD=\"p: w\"", "TIERCACHE_REMOTE_WRITE=through", "TIERCACHE_SERVER_SOCKET=a: b",
		"TIERCACHE_SERVER_REQUIREPASS=p@ss #1 "}
	c, err := loadConfig("serve", nil, env, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Remote.Addrs, AddrList{"10.0.0.5:6379", "10.0.0.6:6379"}) || c.Remote.Prefix != "bench1:" ||
		c.Remote.Password != "p: w" || c.Remote.Write != "through" || c.Server.Socket != "a: b" ||
		c.Server.RequirePass != "p@ss #1 " {
		t.Fatalf("remote from the environment: %+v, socket %q", c.Remote, c.Server.Socket)
	}
	b, err := c.build(zap.NewNop())
	if err != nil || b.tier.OpenRemote == nil || !b.tier.Remote.WriteThrough {
		t.Fatalf("build: %v; OpenRemote set %v, write-through %v", err, b != nil && b.tier.OpenRemote != nil, b != nil && b.tier.Remote.WriteThrough)
	}
	bad, err := loadConfig("serve", nil, []string{"TIERCACHE_REMOTE_ADDRS=nohost", "TIERCACHE_REMOTE_WRITE=sometimes",
		"TIERCACHE_REMOTE_RESYNC=flush"}, os.Stderr)
	if err == nil {
		_, err = bad.build(zap.NewNop())
	}
	for _, want := range []string{"nohost", "remote.write", "remote.resync"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad remote settings: %v; want it to name %s", err, want)
		}
	}
	// TLS files without TLS: refused, not silently ignored.
	plain, err := loadConfig("serve", nil, []string{"TIERCACHE_REMOTE_ADDRS=127.0.0.1:6379", "TIERCACHE_REMOTE_TLS_CA_FILE=/etc/ca.pem"}, os.Stderr)
	if err == nil {
		_, err = plain.build(zap.NewNop())
	}
	if err == nil || !strings.Contains(err.Error(), "remote.tls.enabled is false") {
		t.Errorf("remote.tls.ca_file without enabled: %v", err)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"0": 0, "4096": 4096, "64KiB": 64 << 10, "1g": 1 << 30, "2 MB": 2 << 20, "3T": 3 << 40} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5G", "lots", "99999999999T"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}

// TestStallAfterConfig: cold.stall_after reaches the tier as
// ColdStallAfter (0 = off, which the tier spells negative), from YAML and
// from the environment, and a value below uring.MinStallAfter is a config
// error naming the key.
func TestStallAfterConfig(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want time.Duration
	}{
		{"", 30 * time.Second},
		{"cold:\n  stall_after: 2m\n", 2 * time.Minute},
		{"cold:\n  stall_after: 0s\n", -1},
	} {
		c := defaultConfig()
		if err := c.loadYAML([]byte(tc.yaml), "test"); err != nil {
			t.Fatal(err)
		}
		b, err := c.build(zap.NewNop())
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if b.cold.StallAfter != tc.want {
			t.Errorf("%q: ColdStallAfter %v, want %v", tc.yaml, b.cold.StallAfter, tc.want)
		}
	}
	c, err := loadConfig("serve", nil, []string{"TIERCACHE_COLD_STALL_AFTER=45s", "PATH=/bin"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.build(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if b.cold.StallAfter != 45*time.Second {
		t.Fatalf("TIERCACHE_COLD_STALL_AFTER=45s: ColdStallAfter %v", b.cold.StallAfter)
	}
	for _, bad := range []string{"1ms", "-5s"} {
		c := defaultConfig()
		if err := c.loadYAML([]byte("cold:\n  stall_after: "+bad+"\n"), "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.build(zap.NewNop()); err == nil || !strings.Contains(err.Error(), "cold.stall_after") {
			t.Errorf("stall_after %s: err = %v, want one naming cold.stall_after", bad, err)
		}
	}
}

// TestConfigErrorCount: one problem reads as one sentence, several are
// counted and listed one per line.
func TestConfigErrorCount(t *testing.T) {
	one := (&configError{errs: []error{errors.New("warm.node: no node 9")}}).Error()
	if one != "invalid configuration: warm.node: no node 9" {
		t.Errorf("one problem: %q", one)
	}
	two := (&configError{errs: []error{errors.New("a"), errors.New("b")}}).Error()
	if two != "invalid configuration (2 problems):\n  - a\n  - b" {
		t.Errorf("two problems: %q", two)
	}
}

// TestDirectoryKeysConfig: cold.directory_keys reaches the tier as MaxKeys;
// a negative bound, or one without a cold tier, is a config error naming
// the key.
func TestDirectoryKeysConfig(t *testing.T) {
	c := defaultConfig()
	if err := c.loadYAML([]byte("cold:\n  directory_keys: 5000000\n"), "test"); err != nil {
		t.Fatal(err)
	}
	b, err := c.build(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if b.tier.MaxKeys != 5000000 {
		t.Fatalf("MaxKeys %d, want 5000000", b.tier.MaxKeys)
	}
	for _, bad := range []string{"cold:\n  directory_keys: -1\n", "durability: cache\ncold:\n  backend: none\n  directory_keys: 10\n"} {
		c := defaultConfig()
		if err := c.loadYAML([]byte(bad), "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.build(zap.NewNop()); err == nil || !strings.Contains(err.Error(), "cold.directory_keys") {
			t.Errorf("%q: err = %v, want one naming cold.directory_keys", bad, err)
		}
	}
}

// TestMaxOutputBufferConfig: server.max_output_buffer reaches the server as
// MaxOutputBytes; below 1MiB it is a config error naming the key.
func TestMaxOutputBufferConfig(t *testing.T) {
	c := defaultConfig()
	if err := c.loadYAML([]byte("server:\n  max_output_buffer: 64MiB\n"), "test"); err != nil {
		t.Fatal(err)
	}
	b, err := c.build(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if b.server.MaxOutputBytes != 64<<20 {
		t.Fatalf("MaxOutputBytes %d, want 64 MiB", b.server.MaxOutputBytes)
	}
	c = defaultConfig()
	if err := c.loadYAML([]byte("server:\n  max_output_buffer: 4KiB\n"), "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.build(zap.NewNop()); err == nil || !strings.Contains(err.Error(), "server.max_output_buffer") {
		t.Fatalf("4KiB: err = %v, want one naming server.max_output_buffer", err)
	}
}

// TestSlowlogConfig: server.slowlog_log_slower_than and slowlog_max_len
// reach the server as given, 0 included (log every command, keep none),
// from the file and from the environment.
func TestSlowlogConfig(t *testing.T) {
	c := defaultConfig()
	if err := c.loadYAML([]byte("server:\n  slowlog_log_slower_than: 0\n  slowlog_max_len: 5\n"), "test"); err != nil {
		t.Fatal(err)
	}
	if errs := c.applyEnv([]string{"TIERCACHE_SERVER_SLOWLOG_MAX_LEN=0"}); len(errs) > 0 {
		t.Fatal(errs)
	}
	b, err := c.build(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if o := b.server; !o.SlowlogSet || o.SlowlogLogSlowerThan != 0 || o.SlowlogMaxLen != 0 {
		t.Fatalf("slowlog options %v %d %d, want set, 0, 0", o.SlowlogSet, o.SlowlogLogSlowerThan, o.SlowlogMaxLen)
	}
	d := defaultConfig()
	if b, err := d.build(zap.NewNop()); err != nil || b.server.SlowlogLogSlowerThan != 10000 || b.server.SlowlogMaxLen != 128 {
		t.Fatalf("default slowlog options %d %d (%v), want Redis's 10000 128", b.server.SlowlogLogSlowerThan, b.server.SlowlogMaxLen, err)
	}
}

// TestGoMemoryLimitConfig: server.go_memory_limit is auto (follow the heap
// budget), off, or a size of at least 16MiB; anything else is a config
// error naming the key.
func TestGoMemoryLimitConfig(t *testing.T) {
	for in, want := range map[string]int64{"auto": -1, "off": 0, "512MiB": 512 << 20} {
		c := defaultConfig()
		if err := c.loadYAML([]byte("server:\n  go_memory_limit: "+in+"\n"), "test"); err != nil {
			t.Fatal(err)
		}
		b, err := c.build(zap.NewNop())
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if b.memLimit != want {
			t.Errorf("%s: memLimit %d, want %d", in, b.memLimit, want)
		}
	}
	for _, bad := range []string{"1KiB", "lots", "-5"} {
		c := defaultConfig()
		if err := c.loadYAML([]byte("server:\n  go_memory_limit: "+bad+"\n"), "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.build(zap.NewNop()); err == nil || !strings.Contains(err.Error(), "server.go_memory_limit") {
			t.Errorf("%s: %v, want an error naming server.go_memory_limit", bad, err)
		}
	}
}

// TestWarmSegmentBounds (C2): a warm.segment so small that warm.bytes
// makes millions of segments (1 byte: 268 million for the default 256MiB,
// 16GiB of bookkeeping before the socket answers) is refused at start by
// its key's name, as are one above dram's 1GiB and one that makes more
// than 16Mi segments of warm.bytes; 0 and 4KiB are taken.
func TestWarmSegmentBounds(t *testing.T) {
	for _, seg := range []string{"1", "4095", "2GiB", "4KiB"} {
		c := defaultConfig()
		c.Warm.Bytes = 8 << 30
		if seg == "4KiB" {
			c.Warm.Bytes = 1 << 40 // 256Mi segments of 4KiB
		}
		if err := c.loadYAML([]byte("warm: {segment: "+seg+"}"), "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.build(zap.NewNop()); err == nil || !strings.Contains(err.Error(), "warm.segment") {
			t.Errorf("warm.segment %s: %v, want a refusal naming warm.segment", seg, err)
		}
	}
	for _, seg := range []string{"0", "4KiB"} {
		c := defaultConfig()
		c.Cold.DataDir = t.TempDir()
		if err := c.loadYAML([]byte("warm: {segment: "+seg+"}"), "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.build(zap.NewNop()); err != nil {
			t.Errorf("warm.segment %s: %v", seg, err)
		}
	}
}

// TestServerValuesNamedByKey (C2): a bad server.max_bulk, shutdown_timeout
// or notify_keyspace_events is refused at start naming its key, once, not
// by the server package's own words for it.
func TestServerValuesNamedByKey(t *testing.T) {
	c := defaultConfig()
	if err := c.loadYAML([]byte("server: {max_bulk: 2GiB, shutdown_timeout: -1s, notify_keyspace_events: Q}"), "test"); err != nil {
		t.Fatal(err)
	}
	_, err := c.build(zap.NewNop())
	var ce *configError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"server.max_bulk 2GiB", "server.shutdown_timeout -1s", `server.notify_keyspace_events "Q"`} {
		if strings.Count(err.Error(), want) != 1 {
			t.Errorf("error does not name %q once:\n%v", want, err)
		}
	}
	if len(ce.errs) != 3 {
		t.Errorf("%d problems, want 3:\n%v", len(ce.errs), err)
	}
}
