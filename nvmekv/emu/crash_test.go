package emu

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
)

const (
	crashEnv  = "TIERCACHE_EMU_CRASH_CHILD"
	crashKeys = 200
)

// crashOptions: "cache" is large enough never to reclaim; "strict" is 8
// regions of 64 KiB, so Strict mode keeps evacuating the oldest region.
func crashOptions(path, mode string) Options {
	o := Options{Path: path, Capacity: 1024 * (64 << 10), RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64}
	if mode == "strict" {
		o.Mode, o.Capacity = Strict, 8*(64<<10)
	}
	return o
}

// crashKeyOf: 20 hot keys take 6/7 of the writes, 180 colder keys the rest.
func crashKeyOf(counter uint64) int {
	if counter%7 != 0 {
		return int(counter % 20)
	}
	return 20 + int(counter/7%180)
}

func crashKey(id int) []byte { return []byte(fmt.Sprintf("k%05d", id)) }

// crashValue is self-describing: counter, key id, length, then bytes that
// depend on both, so a reader can tell a written value from anything else.
// One value in 5 is 3545..4096 bytes long, so it goes in an extent.
func crashValue(counter uint64) []byte {
	n := 16 + int(counter*37%600)
	if counter%5 == 2 {
		n = 3545 + int(counter*13%552)
	}
	v := make([]byte, n)
	binary.LittleEndian.PutUint64(v, counter)
	binary.LittleEndian.PutUint32(v[8:], uint32(crashKeyOf(counter)))
	binary.LittleEndian.PutUint32(v[12:], uint32(n))
	for i := 16; i < n; i++ {
		v[i] = byte(counter*7 + uint64(i))
	}
	return v
}

func checkCrashValue(id int, v []byte) (uint64, error) {
	if len(v) < 16 {
		return 0, fmt.Errorf("value of %d bytes", len(v))
	}
	c := binary.LittleEndian.Uint64(v)
	if want := crashValue(c); string(want) != string(v) || crashKeyOf(c) != id {
		return c, fmt.Errorf("value with counter %d is not what was written for key %d", c, id)
	}
	return c, nil
}

// TestCrashChild is the child of TestCrashRecovery: it stores values for
// ever, printing "D n" after each Flush that made counters ≤ n durable.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		return // only does something as TestCrashRecovery's child
	}
	base, _ := strconv.ParseUint(os.Getenv(crashEnv+"_BASE"), 10, 64)
	ns, err := Open(crashOptions(path, os.Getenv(crashEnv+"_MODE")))
	if err != nil {
		fmt.Println("E", err)
		os.Exit(2)
	}
	fmt.Println("R")
	rng := rand.New(rand.NewPCG(base, 7))
	for c := base; c < base+1500; {
		n := 1 + rng.IntN(40)
		ops := make([]*nvmekv.Op, n)
		for i := range ops {
			ops[i] = &nvmekv.Op{Code: nvmekv.OpStore, Key: crashKey(crashKeyOf(c)), Buf: crashValue(c)}
			c++
		}
		if err := ns.Do(ctx, ops...); err != nil {
			fmt.Println("E", err)
			os.Exit(2)
		}
		for _, op := range ops {
			if op.Err != nil {
				fmt.Println("E", op.Err)
				os.Exit(2)
			}
		}
		if err := ns.Flush(ctx); err != nil {
			fmt.Println("E", err)
			os.Exit(2)
		}
		fmt.Println("D", c-1, ns.Stats().Evacuated)
	}
	select {} // wait for the kill
}

// TestCrashRecovery SIGKILLs a writing child at random points (50 times per
// mode, also under -short) and checks after each reopen that every value
// read is one that was written for its key and that every value
// acknowledged durable (or a later one) is present.
func TestCrashRecovery(t *testing.T) {
	for _, mode := range []string{"cache", "strict"} {
		t.Run(mode, func(t *testing.T) { crashCycles(t, mode) })
	}
}

func crashCycles(t *testing.T, mode string) {
	path := t.TempDir() + "/crash"
	minCounter := make([]uint64, crashKeys) // oldest acceptable counter per key (0 = none durable yet)
	evacuated := 0
	rng := rand.New(rand.NewPCG(42, 42))
	for cycle := 0; cycle < 50; cycle++ {
		base := uint64(cycle+1) * 1_000_000
		cmd, lines := startChild(t, "TestCrashChild", crashEnv+"="+path, crashEnv+"_BASE="+strconv.FormatUint(base, 10), crashEnv+"_MODE="+mode)
		durable := uint64(0)
		cycEvac := 0 // the child's latest evacuation count
		killAt := time.Duration(rng.IntN(40000)) * time.Microsecond
		ready := killChild(cmd, lines, killAt, func(l string) {
			switch f := strings.Fields(l); {
			case len(f) == 3 && f[0] == "D":
				durable, _ = strconv.ParseUint(f[1], 10, 64)
				cycEvac, _ = strconv.Atoi(f[2])
			case strings.HasPrefix(l, "E "):
				t.Fatalf("cycle %d: child: %s", cycle, l)
			}
		})
		evacuated += cycEvac
		if !ready {
			t.Fatalf("cycle %d: child never opened the namespace", cycle)
		}
		for c := base; c <= durable && durable >= base; c++ {
			minCounter[crashKeyOf(c)] = c
		}
		ns, err := Open(crashOptions(path, mode))
		if err != nil {
			t.Fatalf("cycle %d: reopen after kill: %v", cycle, err)
		}
		buf := make([]byte, 4096)
		for id := 0; id < crashKeys; id++ {
			n, err := ns.Retrieve(ctx, crashKey(id), buf)
			if errors.Is(err, nvmekv.ErrKeyNotFound) {
				if minCounter[id] != 0 {
					t.Fatalf("cycle %d: key %d lost; counter %d was durable", cycle, id, minCounter[id])
				}
				continue
			}
			if err != nil {
				t.Fatalf("cycle %d: key %d: %v", cycle, id, err)
			}
			c, err := checkCrashValue(id, buf[:n])
			if err != nil {
				t.Fatalf("cycle %d: key %d: %v", cycle, id, err)
			}
			if c < minCounter[id] {
				dumpKey(t, path, crashKey(id))
				t.Fatalf("cycle %d: key %d has counter %d, older than durable %d", cycle, id, c, minCounter[id])
			}
		}
		st := ns.Stats()
		if cycle%10 == 0 {
			t.Logf("cycle %d: killed after %v, durable up to %d, recovered by %s, %d items, %d regions used", cycle, killAt, durable, st.Recovered, st.Items, st.UsedRegions)
		}
		// Alternate: close cleanly (next child opens from the checkpoint) or not.
		if cycle%2 == 0 {
			if err := ns.Close(); err != nil {
				t.Fatalf("cycle %d: close: %v", cycle, err)
			}
		} else {
			ns.release() // drop without the checkpoint, as a crash would
		}
	}
	t.Logf("%s: %d region evacuations reported by the children", mode, evacuated)
	if mode == "strict" && evacuated == 0 {
		t.Error("strict children never evacuated a region")
	}
}

// startChild runs this test binary's test named test in a child process
// with env added to its environment; lines carries what it prints, line
// by line, and is closed when its output ends.
func startChild(t *testing.T, test string, env ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1<<16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

// killChild waits for a child's "R" (its namespace is open), SIGKILLs it
// killAt later (or 10 s after it started, if it never said "R"), and
// passes every line it printed, before the kill and after, to seen. It
// reports whether the child said "R".
func killChild(cmd *exec.Cmd, lines <-chan string, killAt time.Duration, seen func(string)) bool {
	ready := false
	deadline := time.After(10 * time.Second)
	var kill <-chan time.Time
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break wait
			}
			if l == "R" && !ready {
				ready = true
				kill = time.After(killAt)
			}
			seen(l)
		case <-kill:
			break wait
		case <-deadline:
			break wait
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	for l := range lines { // lines printed before the kill still count
		seen(l)
	}
	cmd.Wait()
	return ready
}

// dumpKey logs every on-disk record of key (for a failing crash cycle).
func dumpKey(t *testing.T, path string, key []byte) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	logstore.DumpKey(b, key, t.Logf)
}
