package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runtimeParamsYAML sets every parameter CONFIG SET changes that the
// file has a key for, each away from its default, and the values CONFIG
// GET must then answer.
const runtimeParamsYAML = `server:
  max_clients: 321
  notify_keyspace_events: KEA
  busy_script_time: 1500ms
  pubsub_output_limit: 16MiB 4MiB 30
  tracking_table_max_keys: 5000
  slowlog_log_slower_than: 2500
  slowlog_max_len: 64
  latency_monitor_threshold: 25
  latency_tracking: false
  latency_tracking_info_percentiles: 90 99.99
`

var runtimeParamsWant = map[string]string{
	"maxclients":                        "321",
	"notify-keyspace-events":            "AKE",
	"busy-reply-threshold":              "1500",
	"lua-time-limit":                    "1500",
	"client-output-buffer-limit":        "normal 268435456 0 0 slave 268435456 67108864 60 pubsub 16777216 4194304 30",
	"tracking-table-max-keys":           "5000",
	"slowlog-log-slower-than":           "2500",
	"slowlog-max-len":                   "64",
	"latency-monitor-threshold":         "30", // the environment's, over the file's 25
	"latency-tracking":                  "no",
	"latency-tracking-info-percentiles": "90 99.99",
}

// zeroParamsYAML sets the runtime parameters whose 0 or "" means
// something (unbounded, every command, none, off), which must not be
// taken for "the default".
const zeroParamsYAML = `server:
  tracking_table_max_keys: 0
  busy_script_time: 0s
  slowlog_log_slower_than: 0
  slowlog_max_len: 0
  latency_tracking_info_percentiles: ""
`

var zeroParamsWant = map[string]string{
	"tracking-table-max-keys":           "0",
	"busy-reply-threshold":              "0",
	"slowlog-log-slower-than":           "0",
	"slowlog-max-len":                   "0",
	"latency-monitor-threshold":         "0",
	"latency-tracking":                  "yes",
	"latency-tracking-info-percentiles": "",
}

// TestRuntimeParamsFromConfigFile (C24): a config file setting each
// runtime parameter is what CONFIG GET answers over the socket, from the
// first command, 0 and "" included; a TIERCACHE_SERVER_* variable
// overrides the file's.
func TestRuntimeParamsFromConfigFile(t *testing.T) {
	for _, c := range []struct {
		yaml string
		env  []string
		want map[string]string
	}{
		{runtimeParamsYAML, []string{"TIERCACHE_SERVER_LATENCY_MONITOR_THRESHOLD=30"}, runtimeParamsWant},
		{zeroParamsYAML, nil, zeroParamsWant},
	} {
		cfg := testConfig(t, t.TempDir())
		file := filepath.Join(t.TempDir(), "tc.yaml")
		if err := os.WriteFile(file, []byte(c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := cfg.loadFile(file); err != nil {
			t.Fatal(err)
		}
		if errs := cfg.applyEnv(c.env); len(errs) > 0 {
			t.Fatal(errs)
		}
		sc := startTestSidecar(t, cfg)
		rc := sidecarClient(t, sc, cfg)
		for name, want := range c.want {
			got, err := rc.ConfigGet(context.Background(), name).Result()
			if err != nil || got[name] != want {
				t.Errorf("%.40q: CONFIG GET %s: %q (%v), want %q", c.yaml, name, got[name], err, want)
			}
		}
	}
}

// TestRuntimeParamsBadValues (C24): a bad value of each runtime
// parameter in the file makes serve exit 1 before it listens, with an
// error naming the key and the value; a bad latency_tracking names its
// key too, though yaml's own error names a line.
func TestRuntimeParamsBadValues(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"latency_monitor_threshold: -3", "server.latency_monitor_threshold -3"},
		{"latency_tracking: maybe", "server.latency_tracking: cannot unmarshal !!str `maybe`"},
		{"latency_tracking_info_percentiles: 50 abc", `server.latency_tracking_info_percentiles "50 abc": Invalid latency-tracking-info-percentiles parameters`},
		{"latency_tracking_info_percentiles: 50 101", `server.latency_tracking_info_percentiles "50 101": latency-tracking-info-percentiles parameters should sit between [0.0,100.0]`},
		{"slowlog_log_slower_than: -2", "server.slowlog_log_slower_than -2"},
		{"slowlog_max_len: -1", "server.slowlog_max_len -1"},
		{"notify_keyspace_events: Q", `server.notify_keyspace_events "Q"`},
		{"busy_script_time: -1s", "server.busy_script_time -1s"},
		{"tracking_table_max_keys: -5", "server.tracking_table_max_keys -5"},
		{"pubsub_output_limit: 1MiB", "server.pubsub_output_limit"},
		{"max_clients: -1", "server.max_clients -1"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "bad.yaml")
		sock := filepath.Join(dir, "tc.sock")
		os.WriteFile(file, []byte("server:\n  socket: "+sock+"\n  "+c.yaml+"\n"), 0o600)
		var out, errOut bytes.Buffer
		if rc := run([]string{"serve", "-config", file, "-data", filepath.Join(dir, "data"), "-metrics", "off"}, &out, &errOut); rc != 1 {
			t.Errorf("%s: rc %d, want 1", c.yaml, rc)
		}
		if !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%s: error does not say %q:\n%s", c.yaml, c.want, errOut.String())
		}
		if _, err := os.Stat(sock); !os.IsNotExist(err) {
			t.Errorf("%s: the socket was made (%v)", c.yaml, err)
		}
	}
}
