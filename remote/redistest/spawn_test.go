package redistest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// spawnChildEnv makes the test binary, run again by TestChildDiesWithTestProcess,
// act as the test process whose death is checked.
const spawnChildEnv = "REDISTEST_SPAWN_CHILD"

// TestChildDiesWithTestProcess checks RT4: a process started with Start
// survives the exit of the OS thread that called Start and of other
// threads of the test process (locked goroutines that end take their
// thread with them) and is killed when the test process itself is killed.
func TestChildDiesWithTestProcess(t *testing.T) {
	if os.Getenv(spawnChildEnv) == "1" {
		spawnAndWait()
		return
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep binary: %v", err)
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestChildDiesWithTestProcess$")
	parent.Env = append(os.Environ(), spawnChildEnv+"=1", "REDISTEST_SLEEP="+sleep)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "child ")))
	if err != nil {
		t.Fatalf("child's line %q: %v", line, err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !alive(pid) {
		t.Fatalf("the child %d died when other threads of its parent ended", pid)
	}
	parent.Process.Kill()
	parent.Wait()
	for deadline := time.Now().Add(30 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child %d outlived its killed parent by 30 s", pid)
		}
	}
}

// spawnAndWait is the re-run test binary's part: start a sleep from a
// locked thread that then ends (not the main thread, which Go never ends:
// a goroutine that finds itself there keeps it and another tries), end
// some more locked threads, report the sleep's pid and wait to be killed.
func spawnAndWait() {
	cmd := exec.Command(os.Getenv("REDISTEST_SLEEP"), "300")
	for started := false; !started; {
		done := make(chan bool)
		go func() {
			runtime.LockOSThread() // not unlocked: the thread ends with the goroutine
			if syscall.Gettid() == os.Getpid() {
				done <- false
				select {} // hold the main thread, so the next try runs elsewhere
			}
			if err := Start(cmd); err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			done <- true
		}()
		started = <-done
	}
	for i := 0; i < 8; i++ {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // not unlocked: the thread ends with the goroutine
			close(done)
		}()
		<-done
	}
	time.Sleep(100 * time.Millisecond) // let the threads' exits land before the pid is read
	fmt.Printf("child %d\n", cmd.Process.Pid)
	select {}
}

// alive reports whether pid is a running process (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
