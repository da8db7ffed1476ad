package redistest

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
)

// spawner starts child processes from one OS thread that stays locked for
// the life of the test binary, so a child's parent-death signal (set in
// sys_linux.go) fires when the test process dies, and never because the
// thread that happened to fork it ended (the kernel sends it when the
// forking thread exits: prctl(2), PR_SET_PDEATHSIG).
type spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var children spawner

func (s *spawner) loop() {
	runtime.LockOSThread() // never unlocked: this thread outlives every child
	for r := range s.reqs {
		r.done <- r.cmd.Start()
	}
}

// Start starts cmd as cmd.Start does, except that the child is killed
// (SIGKILL) when the test process dies, even by a -timeout panic or a
// SIGKILL, so no redis-server outlives the test that started it (RT4).
func Start(cmd *exec.Cmd) error {
	children.once.Do(func() {
		children.reqs = make(chan spawnReq)
		go children.loop()
	})
	setParentDeathSignal(cmd)
	r := spawnReq{cmd: cmd, done: make(chan error, 1)}
	children.reqs <- r
	if err := <-r.done; err != nil {
		return fmt.Errorf("redistest: start %s: %w", cmd.Path, err)
	}
	return nil
}
