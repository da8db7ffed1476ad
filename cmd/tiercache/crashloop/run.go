package crashloop

import (
	"context"
	"maps"
	"math/rand/v2"
	"os/exec"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options is one crash loop.
type Options struct {
	// Dir holds the sidecar's log (sidecar.log); the store is wherever
	// Command puts it.
	Dir string
	// Socket is the Unix socket the sidecar serves.
	Socket string
	// Command returns a fresh, unstarted command that serves Socket on the
	// same store every time, in Durability mode.
	Command func() *exec.Cmd
	// Durability is the sidecar's mode: "writethrough" (every acknowledged
	// operation survives a kill: checks are exact) or "drain" (a clean
	// stop keeps everything; a kill keeps only values issued for a key).
	Durability string
	// Kills is the number of SIGKILLs; in drain mode each is preceded by a
	// clean stop and restart.
	Kills int
	// Workers connections, each owning Keys keys (defaults 4 and 150).
	Workers, Keys int
	// MaxValue is the largest value written (default 4 MiB).
	MaxValue int
}

func (o *Options) defaults() {
	if o.Workers == 0 {
		o.Workers = 4
	}
	if o.Keys == 0 {
		o.Keys = 150
	}
	if o.MaxValue == 0 {
		o.MaxValue = 4 << 20
	}
}

// quietRedis drops go-redis's log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// Run is the loop: load for a random 30-430 ms, SIGKILL, restart, check
// every key; in drain mode also a clean stop and a check of exactly what
// the cache held. It fails t on any broken promise and returns the tally.
func Run(t testing.TB, o Options) Tally {
	t.Helper()
	o.defaults()
	redis.SetLogger(quietRedis{}) // its dial retries while a sidecar starts are expected
	logs := make([]map[string]*keyLog, o.Workers)
	all := map[string]*keyLog{}
	for w := range logs {
		logs[w] = map[string]*keyLog{}
		for i := 0; i < o.Keys; i++ {
			l := &keyLog{issued: map[uint64]int{}}
			logs[w][keyName(w, i)], all[keyName(w, i)] = l, l
		}
	}
	aggs := make([]map[string]*aggLog, o.Workers)
	allAggs := map[string]*aggLog{}
	for w := range aggs {
		aggs[w] = map[string]*aggLog{listKey(w): {list: true}, hashKey(w): {hsets: map[string][]uint64{}}}
		maps.Copy(allAggs, aggs[w])
	}
	seqs := make([]uint64, o.Workers)
	var mu sync.Mutex
	errf := func(f string, a ...any) { mu.Lock(); t.Errorf(f, a...); mu.Unlock() }
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 18))
	exact, drain := o.Durability == "writethrough", o.Durability == "drain"
	var tally Tally
	var ups []time.Duration
	kills, cleans := 0, 0
	s := start(t, &o)
	for kills < o.Kills && !t.Failed() {
		if drain {
			runLoad(s.rc, &o, logs, aggs, seqs, r.Uint64(), true, nil, time.Duration(50+r.IntN(350))*time.Millisecond, errf)
			checkAll(t, s.rc, all, true, true, &tally) // what the cache holds at the stop
			checkAggs(t, s.rc, allAggs, false, true, &tally)
			s.stop(t, syscall.SIGTERM)
			cleans++
			s = start(t, &o)
			ups = append(ups, s.up)
			checkAll(t, s.rc, all, true, false, &tally)
			checkAggs(t, s.rc, allAggs, true, false, &tally)
		}
		runLoad(s.rc, &o, logs, aggs, seqs, r.Uint64(), !exact, func() { s.cmd.Process.Signal(syscall.SIGKILL) },
			time.Duration(30+r.IntN(400))*time.Millisecond, errf)
		s.stop(t, syscall.SIGKILL)
		kills++
		s = start(t, &o)
		ups = append(ups, s.up)
		checkAll(t, s.rc, all, exact, false, &tally)
		checkAggs(t, s.rc, allAggs, exact, false, &tally)
	}
	s.stop(t, syscall.SIGTERM)
	sort.Slice(ups, func(i, j int) bool { return ups[i] < ups[j] })
	var writes uint64
	for _, n := range seqs {
		writes += n
	}
	aggOps := 0
	for _, l := range allAggs {
		aggOps += l.ops
	}
	if len(ups) > 0 {
		t.Logf("%s: %d SIGKILLs, %d clean stops, %d writes issued (SET, RPUSH, HSET), %d operations on %d lists and hashes (RPUSH, LPOP, HSET, HDEL), %d key checks: %d lost acknowledged writes, %d resurrected deletes, %d vanished, %d torn or foreign; %d older-or-missing after a drain-mode kill, %d dropped while running (drain is a cache); restart to cache open (Ready) median %v (range %v-%v)",
			o.Durability, kills, cleans, writes, aggOps, len(allAggs), tally.Keys, tally.Lost, tally.Resurrected, tally.Vanished, tally.Torn,
			tally.StaleAfterKill, tally.Dropped, ups[len(ups)/2].Round(time.Millisecond), ups[0].Round(time.Millisecond), ups[len(ups)-1].Round(time.Millisecond))
	}
	if tally.Bad() > 0 {
		t.Fatalf("%d bad keys", tally.Bad())
	}
	return tally
}
