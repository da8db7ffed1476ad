package server

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/tier"
)

// TestTypedModelConcurrentCold (S40, S41): clients at once change sets and
// sorted sets whose live structures a hot tier of 32 KiB keeps evicting
// to the cold tier and loading back from it, each its own keys against a
// model of its own, and shared keys with changes that commute (SADD of
// distinct members, ZINCRBY by 1); every key ends as its model says.
func TestTypedModelConcurrentCold(t *testing.T) {
	tc := openColdCache(t, func(o *tier.Options, _ *coldstore.Config) {
		o.HotBytes, o.HotSegmentBytes, o.HotMaxValue = 32<<10, 4<<10, 4<<10
	})
	_, path := startServerWith(t, tc, nil)
	const clients, steps = 4, 300
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for id := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- typedModelClient(t, path, id, steps)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r := dialExact(t, path)
	if got, want := r.do("SCARD", "shared-set"), ":"+strconv.Itoa(clients*steps)+"\r\n"; got != want {
		t.Fatalf("shared set: SCARD %q, want %q", got, want)
	}
	for id := range clients {
		if got, want := r.do("ZSCORE", "shared-zset", fmt.Sprint("c", id)), fmt.Sprintf("$%d\r\n%d\r\n", len(strconv.Itoa(steps)), steps); got != want {
			t.Fatalf("shared zset: client %d's score %q, want %q", id, got, want)
		}
	}
	if s := tc.Stats(); s.Flushed == 0 {
		t.Fatalf("no structure was evicted to cold: the test did not exercise it (%+v)", s.DRAM)
	}
}

// typedModelClient runs steps random changes of its own set and sorted
// set, checked against its models after each, and of the shared keys.
func typedModelClient(t *testing.T, path string, id, steps int) error {
	r := dialExact(t, path) // its errors end the test: I/O only
	rnd := rand.New(rand.NewPCG(uint64(id), 9))
	sk, zk := fmt.Sprint("set-", id), fmt.Sprint("zset-", id)
	sm, zm := map[string]bool{}, map[string]int{}
	for i := range steps {
		m := fmt.Sprint("m", rnd.IntN(40))
		switch rnd.IntN(4) {
		case 0:
			r.do("SADD", sk, m)
			sm[m] = true
		case 1:
			r.do("SREM", sk, m)
			delete(sm, m)
		case 2:
			s := rnd.IntN(100)
			r.do("ZADD", zk, strconv.Itoa(s), m)
			zm[m] = s
		default:
			r.do("ZREM", zk, m)
			delete(zm, m)
		}
		r.do("SADD", "shared-set", fmt.Sprint("c", id, "-", i))
		r.do("ZINCRBY", "shared-zset", "1", fmt.Sprint("c", id))
		if i%25 != 24 {
			continue
		}
		got := parseReply(r.do("SMEMBERS", sk))
		var have []string
		for _, k := range got.kids {
			have = append(have, strings.TrimSuffix(k.body, "\r\n"))
		}
		slices.Sort(have) // a set's order is no order (as in Redis)
		if want := slices.Sorted(maps.Keys(sm)); !slices.Equal(have, want) {
			return fmt.Errorf("client %d step %d: set %q, model %q", id, i, have, want)
		}
		zr := parseReply(r.do("ZRANGE", zk, "0", "-1", "WITHSCORES"))
		if len(zr.kids) != 2*len(zm) {
			return fmt.Errorf("client %d step %d: zset of %d entries, model %d", id, i, len(zr.kids)/2, len(zm))
		}
		for j := 0; j+1 < len(zr.kids); j += 2 {
			mem, sc := strings.TrimSuffix(zr.kids[j].body, "\r\n"), strings.TrimSuffix(zr.kids[j+1].body, "\r\n")
			if s, ok := zm[mem]; !ok || strconv.Itoa(s) != sc {
				return fmt.Errorf("client %d step %d: %s scores %s, model %d (%v)", id, i, mem, sc, s, ok)
			}
		}
	}
	return nil
}
