package main

import (
	"strings"
	"testing"
)

// FuzzConfigLoad: any YAML file and any TIERCACHE_* value load without a
// panic; a bad one is an error naming what is wrong, a good one builds or
// is refused by build with a message, never a panic; and a config that
// builds passes every package's Validate (build runs them).
func FuzzConfigLoad(f *testing.F) {
	f.Add([]byte("server:\n  socket: /tmp/x.sock\n  socket_mode: \"0660\"\nhot:\n  bytes: 64MiB\n"), "TIERCACHE_WARM_BYTES", "0")
	f.Add([]byte("durability: writethrough\ncold:\n  backend: none\n"), "TIERCACHE_SERVER_MAX_CLIENTS", "-1")
	f.Add([]byte("hot: {bytes: 1e30}\n"), "TIERCACHE_COLD_CAPACITY", "1.5TiB")
	f.Add([]byte("flusher:\n  batch_delay: 5ms\nwarm:\n  node: unbound\n"), "TIERCACHE_SERVER_SHUTDOWN_TIMEOUT", "-3s")
	f.Add([]byte("unknown: 1\n"), "TIERCACHE_DURABILITY", "")
	f.Add([]byte("&a [*a]"), "TIERCACHE_HOT_BYTES", "{")
	f.Fuzz(func(t *testing.T, yml []byte, env, val string) {
		if len(yml) > 1<<16 {
			return
		}
		cfg := defaultConfig()
		if err := cfg.loadYAML(yml, "fuzz.yaml"); err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, e := range cfg.applyEnv([]string{env + "=" + val}) {
			if !strings.Contains(e.Error(), env) {
				t.Fatalf("error does not name the variable %s: %v", env, e)
			}
		}
		cfg.Server.SocketGroup = "" // a group name would be looked up in /etc/group
		if _, err := cfg.build(nopLogger()); err != nil && err.Error() == "" {
			t.Fatal("build refused the config without a message")
		}
	})
}
