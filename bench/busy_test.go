package bench

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

// startBusy, when on (TIERCACHE_BENCH_BUSY=1), keeps every core busy for
// the rest of the benchmark: one shell busy loop per CPU, in processes of
// their own (the Go scheduler cannot make room for the benchmark by
// descheduling them), killed when the benchmark ends (and by the kernel if
// the test binary dies first: Pdeathsig).
func startBusy(tb testing.TB, on bool) {
	if !on {
		return
	}
	for range runtime.NumCPU() {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			tb.Fatalf("start a CPU burner: %v", err)
		}
		tb.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}
