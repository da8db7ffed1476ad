package sidecar

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/cmd/tiercache/crashloop"
)

// TestSidecarColdNVMeCrashLoop is the reliability crash loop (package
// crashloop, as cmd/tiercache's TestCrashLoop runs it on the host) with the
// cold tier on /dev/ng1n1 through NVM passthrough: writethrough survives
// SIGKILLs at random moments with no acknowledged write lost, no
// acknowledged delete back and no torn value, and drain mode comes back
// exactly after clean stops. Fewer kills than on the host: under TCG a
// restart that scans the namespace takes seconds.
func TestSidecarColdNVMeCrashLoop(t *testing.T) {
	requireGuest(t)
	for _, mode := range []struct {
		durability string
		kills      int
	}{{"writethrough", 20}, {"drain", 8}} {
		t.Run(mode.durability, func(t *testing.T) {
			zeroSuperblock(t)
			dir := t.TempDir()
			socket := "/tmp/tc-vm-crash.sock"
			cfg := filepath.Join(dir, "tiercache.yaml")
			c := strings.Replace(config(dir, socket), "  backend: emulated\n", "  backend: nvme\n  device: "+coldNG+"\n", 1)
			c = strings.Replace(c, "durability: drain\n", "durability: "+mode.durability+"\n", 1)
			if err := os.WriteFile(cfg, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			crashloop.Run(t, crashloop.Options{Dir: dir, Socket: socket, Durability: mode.durability, Kills: mode.kills,
				Workers: 2, Keys: 60, MaxValue: 1 << 20,
				Command: func() *exec.Cmd { return exec.Command(binary(t), "serve", "-config", cfg) }})
		})
	}
}
