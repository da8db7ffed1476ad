package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/remote/redistest"
)

// BenchmarkRemoteClients measures the two maintained Go cluster clients on
// the remote tier's own workload, against one real Redis Cluster of three
// masters: rueidis (what the remote tier uses) and go-redis's
// ClusterClient.
//
//   - read: the keys an embedding MGET missed locally, 256 keys in all:
//     one MGET per slot and each key's PEXPIRETIME, in one pipeline a node;
//   - write: 64 changes written behind, each a MULTI, SET ... GET,
//     PEXPIRETIME, EXEC of its key (remote/write.go), all in flight at once.
//
// It reports the client's CPU time per operation (user + system of this
// process, over the op) beside ns/op: on a machine shared with the
// servers, CPU per op is the figure to compare, not the rate.
func BenchmarkRemoteClients(b *testing.B) {
	cl := redistest.StartCluster(b, 3, 0)
	ctx := context.Background()
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: cl.Addrs(), DisableCache: true, PipelineMultiplex: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	gc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	defer gc.Close()
	val := make([]byte, 1600)
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = "bench:d1:emb:" + strconv.Itoa(i)
		if err := gc.Set(ctx, keys[i], val, 0).Err(); err != nil {
			b.Fatal(err)
		}
	}
	bySlot := map[uint16][]string{}
	for _, k := range keys {
		s := remote.KeySlot([]byte(k))
		bySlot[s] = append(bySlot[s], k)
	}
	clients := []struct {
		name  string
		read  func() error
		write func(keys []string) error
	}{
		{"rueidis", func() error {
			cmds := make(rueidis.Commands, 0, len(bySlot)+len(keys))
			for _, ks := range bySlot {
				cmds = append(cmds, rc.B().Mget().Key(ks...).Build())
			}
			for _, k := range keys {
				cmds = append(cmds, rc.B().Pexpiretime().Key(k).Build())
			}
			for _, r := range rc.DoMulti(ctx, cmds...) {
				if err := r.Error(); err != nil {
					return err
				}
			}
			return nil
		}, func(ks []string) error {
			return fanOut(ks, func(k string) error {
				res := rc.DoMulti(ctx, rc.B().Multi().Build(), rc.B().Set().Key(k).Value(rueidis.BinaryString(val)).Get().Build(),
					rc.B().Pexpiretime().Key(k).Build(), rc.B().Exec().Build())
				return res[3].Error()
			})
		}},
		{"go-redis", func() error {
			p := gc.Pipeline()
			for _, ks := range bySlot {
				p.MGet(ctx, ks...)
			}
			for _, k := range keys {
				p.PExpireTime(ctx, k)
			}
			_, err := p.Exec(ctx)
			return err
		}, func(ks []string) error {
			return fanOut(ks, func(k string) error {
				_, err := gc.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.SetArgs(ctx, k, val, redis.SetArgs{Get: true})
					p.PExpireTime(ctx, k)
					return nil
				})
				if err == redis.Nil {
					return nil
				}
				return err
			})
		}},
	}
	for _, c := range clients {
		for _, op := range []string{"read", "write"} {
			b.Run(fmt.Sprintf("%s/%s", c.name, op), func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime()
				t0 := time.Now()
				for i := 0; i < b.N; i++ {
					var err error
					if op == "read" {
						err = c.read()
					} else {
						err = c.write(keys[(i*64)%256 : (i*64)%256+64])
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
				_ = t0
			})
		}
	}
}

// cpuTime is the CPU time this process used so far (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fanOut runs do for each key at once, as the write-behind queue's batch
// does, and returns the first error.
func fanOut(keys []string, do func(k string) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for _, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := do(k); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
