package sidecar

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/vmtest/guest/kvtcp"
)

// TestSidecarColdKVSSDOverTCP (V25) is the whole sidecar with cold.backend
// passthrough on a KV SSD: `tiercache kvtarget` attached through the
// kernel's nvme-tcp host as /dev/ngXnY (vmtest/guest/kvtcp). The
// flusher's linked SQE chains (256 KiB values as chunks of at most 128 KiB,
// header last) go through the real driver; SET, GET and MGET batches
// answer what was SET, and after a draining restart every key comes back
// from cold.
func TestSidecarColdKVSSDOverTCP(t *testing.T) {
	requireGuest(t)
	d := kvtcp.Attach(t, "/tmp/kvssd.img", "256MiB")
	dir := t.TempDir()
	socket := "/tmp/tc-vm-kvssd.sock"
	cfg := filepath.Join(dir, "tiercache.yaml")
	c := strings.Replace(config(dir, socket), "  backend: emulated\n", "  backend: passthrough\n  device: "+d.NG+"\n", 1)
	c = strings.Replace(c, "  data_dir: "+filepath.Join(dir, "data")+"\n  path: "+coldDevice+"\n  capacity: 128MiB\n", "", 1)
	if err := os.WriteFile(cfg, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	setCheckRestart(t, cfg, socket, "passthrough:"+d.NG, 2*time.Minute, d.TargetOutput)
	if s, _ := os.ReadFile("/sys/class/nvme/" + d.Ctrl + "/state"); strings.TrimSpace(string(s)) != "live" {
		t.Fatalf("%s state %q after the run\nkernel: %s", d.Ctrl, s, kvtcp.KernelLog("nvme"))
	}
}
