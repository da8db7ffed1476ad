package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"
)

// TestKubernetesConfig: the configuration in the Kubernetes example's
// ConfigMap (deploy/kubernetes/tiercache.yaml) is one serve accepts, with
// the image's environment (Dockerfile ENV) on top.
func TestKubernetesConfig(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/tiercache.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var conf string
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		var cm struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
		}
		if err := yaml.Unmarshal(doc, &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Kind == "ConfigMap" {
			conf = cm.Data["tiercache.yaml"]
		}
	}
	if conf == "" {
		t.Fatal("no ConfigMap with tiercache.yaml")
	}
	path := filepath.Join(t.TempDir(), "tiercache.yaml")
	os.WriteFile(path, []byte(conf), 0o600)
	env := []string{"TIERCACHE_SERVER_SOCKET=/run/tiercache/tiercache.sock", "TIERCACHE_COLD_DATA_DIR=/var/lib/tiercache"}
	cfg, err := loadConfig("serve", []string{"-config", path}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.build(zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	if cfg.Server.SocketMode != "0660" || cfg.Server.Socket != "/run/tiercache/tiercache.sock" {
		t.Errorf("socket %s mode %s, want /run/tiercache/tiercache.sock 0660", cfg.Server.Socket, cfg.Server.SocketMode)
	}
}
