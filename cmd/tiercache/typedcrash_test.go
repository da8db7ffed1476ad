package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tiercache/tiercache/cmd/tiercache/crashloop"
)

// typedModel is what a worker's set and sorted set hold after its
// acknowledged commands.
type typedModel struct {
	set  map[string]bool
	zset map[string]int64
}

func (m typedModel) clone() typedModel {
	return typedModel{set: maps.Clone(m.set), zset: maps.Clone(m.zset)}
}

// apply changes m as cmd (on the worker's keys "s" and "z") does.
func (m typedModel) apply(cmd []string) {
	switch cmd[0] {
	case "SADD":
		m.set[cmd[2]] = true
	case "SREM":
		delete(m.set, cmd[2])
	case "ZADD":
		var n int64
		fmt.Sscan(cmd[2], &n)
		m.zset[cmd[3]] = n
	case "ZINCRBY":
		var n int64
		fmt.Sscan(cmd[2], &n)
		m.zset[cmd[3]] += n
	case "ZREM":
		delete(m.zset, cmd[2])
	}
}

// read is what the server holds for a worker's keys, as a model.
func readTyped(ctx context.Context, rc *redis.Client, s, z string) (typedModel, error) {
	m := typedModel{set: map[string]bool{}, zset: map[string]int64{}}
	mem, err := rc.SMembers(ctx, s).Result()
	if err != nil {
		return m, err
	}
	for _, x := range mem {
		m.set[x] = true
	}
	zs, err := rc.ZRangeWithScores(ctx, z, 0, -1).Result()
	for _, e := range zs {
		m.zset[e.Member.(string)] = int64(e.Score)
	}
	return m, err
}

func sameTyped(a, b typedModel) bool {
	return maps.Equal(a.set, b.set) && maps.Equal(a.zset, b.zset)
}

// TestSetsAndSortedSetsSurviveSIGKILL (C22): in writethrough, four
// clients change a set and a sorted set each (SADD, SREM, ZADD, ZINCRBY,
// ZREM) until the sidecar is SIGKILLed at a random moment, four times;
// after each restart every set and sorted set is what its client's
// acknowledged commands made it, or that with the one command in flight
// at the kill.
func TestSetsAndSortedSetsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: four sidecar restarts under load")
	}
	dir, sock := t.TempDir(), shortSocket(t)
	command := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "GOMEMLIMIT=", "TIERCACHE_WARM_NODE=unbound", "TIERCACHE_COLD_CAPACITY=1GiB",
			serveEnv+"=serve -socket "+sock+" -metrics off -log-level error -data "+dir+" -durability writethrough"+
				" -hot-bytes 16MiB -warm-bytes 16MiB")
		return cmd
	}
	ctx := context.Background()
	const workers = 4
	models := make([]typedModel, workers)
	for w := range models {
		models[w] = typedModel{set: map[string]bool{}, zset: map[string]int64{}}
	}
	start := func() (*exec.Cmd, *redis.Client) {
		cmd := command()
		logf, err := os.OpenFile(dir+"/sidecar.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer logf.Close()
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: workers + 1, MaxRetries: -1})
		begin := time.Now()
		for crashloop.Ready(ctx, rc) != nil {
			if time.Since(begin) > time.Minute {
				cmd.Process.Kill()
				cmd.Wait()
				out, _ := os.ReadFile(dir + "/sidecar.log")
				t.Fatalf("the sidecar did not come up: %s", out)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return cmd, rc
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	cmd, rc := start()
	acked := make([]int, workers)
	for round := range 4 {
		inflight := make([][]string, workers)
		var wg sync.WaitGroup
		for w := range workers {
			seed := r.Uint64()
			wg.Go(func() {
				wr := rand.New(rand.NewPCG(seed, uint64(w)))
				s, z := fmt.Sprint("s:", w), fmt.Sprint("z:", w)
				for {
					m := fmt.Sprint("m", wr.IntN(40))
					c := [][]string{{"SADD", s, m}, {"SREM", s, m}, {"ZADD", z, fmt.Sprint(wr.IntN(1000)), m},
						{"ZINCRBY", z, fmt.Sprint(wr.IntN(9) - 4), m}, {"ZREM", z, m}}[wr.IntN(5)]
					inflight[w] = c
					args := make([]any, len(c))
					for i, a := range c {
						args[i] = a
					}
					if err := rc.Do(ctx, args...).Err(); err != nil {
						return // the kill: c may or may not have been applied
					}
					models[w].apply(c)
					acked[w]++
				}
			})
		}
		time.Sleep(time.Duration(200+r.IntN(600)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		wg.Wait()
		rc.Close()
		cmd, rc = start()
		for w := range workers {
			got, err := readTyped(ctx, rc, fmt.Sprint("s:", w), fmt.Sprint("z:", w))
			if err != nil {
				t.Fatalf("round %d: read worker %d's keys: %v", round, w, err)
			}
			// The one command in flight at the kill may have been
			// applied: the model takes it when the server shows it.
			with := models[w].clone()
			with.apply(inflight[w])
			switch {
			case sameTyped(got, models[w]):
			case sameTyped(got, with):
				models[w] = with
			default:
				t.Errorf("round %d: worker %d after SIGKILL (in flight %q):\n got   %v\n model %v",
					round, w, inflight[w], got, models[w])
			}
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("acknowledged commands by worker: %v", acked)
	rc.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}
