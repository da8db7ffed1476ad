package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/tiercache/tiercache/cmd/tiercache/crashloop"
)

// TestCrashLoop: writethrough survives 35 SIGKILLs at random moments with
// no acknowledged write lost, no acknowledged delete back, no key vanished
// by an interrupted overwrite and no torn or foreign value, each worker's
// list and hash (RPUSH, LPOP, HSET, HDEL: live structures in DRAM) reading
// as acknowledged or as the operation in flight gives; drain mode
// drops no acknowledged write while it runs (the cold store has room),
// comes back exactly after each of 15 clean stops, and after each of 15
// SIGKILLs every key reads nil or a value issued for it. The sidecar is
// this test binary re-executed (as in TestPeakRSSWithinBudget); the loop
// is package crashloop, which the QEMU guest runs on an NVM namespace too.
func TestCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 50 sidecar restarts under load take about two minutes")
	}
	if raceEnabled {
		t.Skip("the race detector makes the sidecar (this binary) too slow for the loop's budget")
	}
	for _, mode := range []struct {
		durability string
		kills      int
	}{{"writethrough", 35}, {"drain", 15}} {
		t.Run(mode.durability, func(t *testing.T) {
			dir, sock := t.TempDir(), shortSocket(t)
			crashloop.Run(t, crashloop.Options{Dir: dir, Socket: sock, Durability: mode.durability, Kills: mode.kills,
				Command: func() *exec.Cmd {
					cmd := exec.Command(os.Args[0])
					cmd.Env = append(os.Environ(), "GOMEMLIMIT=", "TIERCACHE_WARM_NODE=unbound", "TIERCACHE_COLD_CAPACITY=1GiB",
						serveEnv+"=serve -socket "+sock+" -metrics off -log-level error -data "+dir+" -durability "+mode.durability+
							" -hot-bytes 16MiB -warm-bytes 16MiB")
					return cmd
				}})
		})
	}
}
