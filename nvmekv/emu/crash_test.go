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
)

const (
	crashEnv  = "TIERCACHE_EMU_CRASH_CHILD"
	crashKeys = 200
)

func crashOptions(path string) Options {
	return Options{Path: path, Capacity: 1024 * (64 << 10), RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64}
}

func crashKey(id int) []byte { return []byte(fmt.Sprintf("k%05d", id)) }

// crashValue is self-describing: counter, key id, length, then bytes that
// depend on both, so a reader can tell a written value from anything else.
func crashValue(counter uint64) []byte {
	n := 16 + int(counter*37%600)
	v := make([]byte, n)
	binary.LittleEndian.PutUint64(v, counter)
	binary.LittleEndian.PutUint32(v[8:], uint32(counter%crashKeys))
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
	if want := crashValue(c); string(want) != string(v) || int(c%crashKeys) != id {
		return c, fmt.Errorf("value with counter %d is not what was written for key %d", c, id)
	}
	return c, nil
}

// TestCrashChild is the child of TestCrashRecovery: it stores values for
// ever, printing "D n" after each Flush that made counters ≤ n durable.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("only runs as TestCrashRecovery's child")
	}
	base, _ := strconv.ParseUint(os.Getenv(crashEnv+"_BASE"), 10, 64)
	ns, err := Open(crashOptions(path))
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
			ops[i] = &nvmekv.Op{Code: nvmekv.OpStore, Key: crashKey(int(c % crashKeys)), Buf: crashValue(c)}
			c++
		}
		if err := ns.Do(ctx, ops...); err != nil {
			fmt.Println("E", err)
			os.Exit(2)
		}
		if err := ns.Flush(ctx); err != nil {
			fmt.Println("E", err)
			os.Exit(2)
		}
		fmt.Println("D", c-1)
	}
	select {} // wait for the kill
}

// TestCrashRecovery SIGKILLs a writing child at random points (50 times,
// also under -short) and checks after each reopen that every value read is
// one that was written for its key and that every value acknowledged
// durable (or a later one) is present.
func TestCrashRecovery(t *testing.T) {
	path := t.TempDir() + "/crash"
	minCounter := make([]uint64, crashKeys) // oldest acceptable counter per key (0 = none durable yet)
	rng := rand.New(rand.NewPCG(42, 42))
	for cycle := 0; cycle < 50; cycle++ {
		base := uint64(cycle+1) * 1_000_000
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path, crashEnv+"_BASE="+strconv.FormatUint(base, 10))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 4096)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		durable := uint64(0)
		ready := false
		deadline := time.After(10 * time.Second)
		killAt := time.Duration(rng.IntN(40000)) * time.Microsecond
		var kill <-chan time.Time
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break wait
				}
				switch {
				case l == "R":
					ready = true
					kill = time.After(killAt)
				case strings.HasPrefix(l, "D "):
					durable, _ = strconv.ParseUint(l[2:], 10, 64)
				case strings.HasPrefix(l, "E "):
					t.Fatalf("cycle %d: child: %s", cycle, l)
				}
			case <-kill:
				break wait
			case <-deadline:
				break wait
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for l := range lines { // lines printed before the kill still count
			if strings.HasPrefix(l, "D ") {
				durable, _ = strconv.ParseUint(l[2:], 10, 64)
			}
		}
		cmd.Wait()
		if !ready {
			t.Fatalf("cycle %d: child never opened the namespace", cycle)
		}
		for c := base; c <= durable && durable >= base; c++ {
			minCounter[c%crashKeys] = c
		}
		ns, err := Open(crashOptions(path))
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
				t.Fatalf("cycle %d: key %d has counter %d, older than durable %d", cycle, id, c, minCounter[id])
			}
		}
		st := ns.Stats()
		if cycle%10 == 0 {
			t.Logf("cycle %d: killed after %v, durable up to %d, recovered by %s, %d items", cycle, killAt, durable, st.Recovered, st.Items)
		}
		// Alternate: close cleanly (next child opens from the checkpoint) or not.
		if cycle%2 == 0 {
			if err := ns.Close(); err != nil {
				t.Fatalf("cycle %d: close: %v", cycle, err)
			}
		} else {
			ns.ioMu.Lock() // drop without the checkpoint, as a crash would
			ns.release()
			ns.ioMu.Unlock()
		}
	}
}
