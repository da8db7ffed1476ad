package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/uring"
)

// TestAggregatesColdModel (S62): random commands on hashes, lists, sets
// and sorted sets of random sizes (a few elements to thousands, elements
// of a byte to near the hot tier's largest value and past it) go to
// tiercache, whose DRAM (hot 64 KiB, warm 128 KiB, one tenant of a
// quarter) holds almost none of them, so they live in the cold tier cut
// in pieces (ColdCut), and to redis-server; every reply must be the same
// (orderless ones sorted), and after every restart, and at the end, every
// key's type, contents and whether it has a TTL. The cache restarts now
// and then: cleanly (drain and writethrough) and, in writethrough, as
// after a SIGKILL (a copy of the store's file taken between two
// commands). RESP2 and RESP3 connections alternate. The seed is printed
// on failure; TIERCACHE_AGG_SEED=n runs that seed alone,
// TIERCACHE_AGG_STEPS=n that many steps, TIERCACHE_FULL=1 seeds 1 and 2.
func TestAggregatesColdModel(t *testing.T) {
	needRedisAndURing(t)
	// CI runs seed 1 in the plain run and seed 2 at 100 steps in the race
	// run (-short); TIERCACHE_FULL=1 runs both seeds (1,000 steps each but
	// under -short), as every run did before (90-140 s here; seed 2 is the
	// slower by about half).
	steps, seeds := 1000, []uint64{1}
	if testing.Short() {
		steps, seeds = 100, []uint64{2}
	}
	if fullTests() {
		seeds = []uint64{1, 2}
	}
	if s := os.Getenv("TIERCACHE_AGG_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []uint64{n}
	}
	if s := os.Getenv("TIERCACHE_AGG_STEPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		steps = n
	}
	for _, d := range []tier.Durability{tier.DurabilityDrain, tier.DurabilityWriteThrough} {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", d, seed), func(t *testing.T) {
				m := newAggModel(t, d, seed)
				defer m.close()
				m.run(steps)
			})
		}
	}
}

// needRedisAndURing skips (or fails, as skipOrFail decides) without
// redis-server or io_uring.
func needRedisAndURing(t *testing.T) {
	t.Helper()
	if r, err := uring.New(uring.Options{Entries: 4}); err != nil {
		skipOrFail(t, "io_uring unavailable, the emulated cold store cannot run: %v", err)
	} else {
		r.Close()
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		skipOrFail(t, "redis-server is not installed: no peer to compare with")
	}
}

// aggConn is a connection reading replies as trees (parseReplyAt).
type aggConn struct {
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func dialAgg(path string) (*aggConn, error) {
	nc, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(10 * time.Minute))
	return &aggConn{nc: nc, br: bufio.NewReaderSize(nc, 1<<16), bw: bufio.NewWriterSize(nc, 1<<16)}, nil
}

func (c *aggConn) do(args []string) (*replyNode, error) {
	fmt.Fprintf(c.bw, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.bw, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.bw.Flush(); err != nil {
		return nil, err
	}
	return parseReplyAt(c.br)
}

// aggModel is tiercache and redis-server driven side by side.
type aggModel struct {
	t          *testing.T
	seed       uint64
	r          *rand.Rand
	durability tier.Durability
	dir        string
	tc         *tier.Cache
	srv        *Server
	ours, peer *aggConn
	proto      int
	recent     []string // the last commands, for a failure's message
	restarts   int
	crashes    int
	coldSeen   int                        // keys found in cold alone at checkAll
	fexp       map[string]map[string]bool // the fields with an expiry, by key
	hfeLoose   bool                       // hfeSame takes 2 (deleted) for 1
	stop       chan struct{}
	noiseDone  chan struct{}
}

// noise reads random keys on a connection of its own until stopNoise,
// ignoring the replies: its cold reads, piece reads and promotions
// overlap the commands compared, which must not notice them.
func (m *aggModel) noise(path string) {
	c, err := dialAgg(path)
	if err != nil {
		m.fatalf("dial: %v", err)
	}
	m.stop, m.noiseDone = make(chan struct{}), make(chan struct{})
	r := rand.New(rand.NewPCG(m.r.Uint64(), 59))
	go func() {
		defer close(m.noiseDone)
		defer c.nc.Close()
		for {
			select {
			case <-m.stop:
				return
			default:
			}
			ks := aggKeys[r.IntN(len(aggKeys))]
			k := ks[r.IntN(len(ks))]
			f := "f" + strconv.Itoa(r.IntN(4000))
			cmd := [][]string{{"HGET", k, f}, {"HMGET", k, f, "e1"}, {"HGETALL", k}, {"HLEN", k}, {"LRANGE", k, "0", "-1"},
				{"LRANGE", k, "-3", "-1"}, {"LINDEX", k, "5"}, {"LLEN", k}, {"SMEMBERS", k}, {"SISMEMBER", k, "e3"},
				{"ZRANGE", k, "0", "-1"}, {"ZSCORE", k, "e2"}, {"TYPE", k}, {"EXISTS", k}}[r.IntN(14)]
			if _, err := c.do(cmd); err != nil {
				return // the server closed
			}
		}
	}()
}

func (m *aggModel) stopNoise() {
	close(m.stop)
	<-m.noiseDone
}

func newAggModel(t *testing.T, d tier.Durability, seed uint64) *aggModel {
	m := &aggModel{t: t, seed: seed, r: rand.New(rand.NewPCG(seed, 58)), durability: d, dir: t.TempDir(),
		fexp: map[string]map[string]bool{}}
	peer, err := dialAgg(startRedis(t))
	if err != nil {
		t.Fatal(err)
	}
	m.peer = peer
	m.open()
	return m
}

// open opens the cache on m.dir and connects to it.
func (m *aggModel) open() {
	cc := coldstore.Config{DataDir: m.dir, Capacity: 256 << 20, RegionBytes: 256 << 10, Cut: ColdCut}
	tc, err := tier.Open(tier.Options{HotBytes: 64 << 10, HotSegmentBytes: 16 << 10, HotMaxValue: 4 << 10,
		WarmConfig: tier.WarmConfig{WarmBytes: 128 << 10, WarmSegmentBytes: 16 << 10},
		Durability: m.durability,
		Tenants:    []tier.Tenant{{Name: "t", Prefix: "t:", Quota: 48 << 10}},
		OpenCold:   func(p backend.Params) (backend.Store, error) { return coldstore.Open(cc, p) }})
	if err != nil {
		m.fatalf("open: %v", err)
	}
	path := shortSocket(m.t)
	s, err := New(tc, Options{UnixSocket: path, ShutdownTimeout: 2 * time.Second})
	if err == nil {
		err = s.Start()
	}
	if err != nil {
		tc.Close()
		m.fatalf("start: %v", err)
	}
	m.tc, m.srv = tc, s
	if m.ours, err = dialAgg(path); err != nil {
		m.fatalf("dial: %v", err)
	}
	m.noise(path)
	m.proto = 2 + m.r.IntN(2)
	for _, c := range []*aggConn{m.ours, m.peer} {
		if _, err := c.do([]string{"HELLO", strconv.Itoa(m.proto)}); err != nil {
			m.fatalf("HELLO: %v", err)
		}
	}
}

func (m *aggModel) close() {
	if m.srv == nil {
		return
	}
	m.ours.nc.Close()
	m.stopNoise()
	err := errors.Join(m.srv.Close(), m.tc.Close())
	m.srv, m.tc = nil, nil
	if err != nil {
		m.fatalf("close: %v", err)
	}
}

// crash restarts the cache on a copy of its store's file taken now, as a
// SIGKILL now would leave it (crashCopy in package tier).
func (m *aggModel) crash() {
	to := m.t.TempDir()
	src, err := os.Open(filepath.Join(m.dir, "cold.kv"))
	if err != nil {
		m.fatalf("crash: %v", err)
	}
	dst, err := os.Create(filepath.Join(to, "cold.kv"))
	if err == nil {
		_, err = io.Copy(dst, src)
		err = errors.Join(err, dst.Close())
	}
	src.Close()
	if err != nil {
		m.fatalf("crash: %v", err)
	}
	m.close()
	m.dir = to
	m.open()
}

func (m *aggModel) fatalf(format string, a ...any) {
	m.t.Helper()
	m.t.Fatalf("seed %d (TIERCACHE_AGG_SEED=%d), %s, after %d restarts and %d crashes: %s\nlast commands:\n%s",
		m.seed, m.seed, m.durability, m.restarts, m.crashes, fmt.Sprintf(format, a...), strings.Join(m.recent, "\n"))
}

// aggKeys are the keys: each kind's own, some in the tenant "t".
var aggKeys = func() (ks [][]string) {
	for _, p := range []string{"h", "l", "s", "z"} {
		ks = append(ks, []string{p + "0", p + "1", p + "2", "t:" + p + "0", "t:" + p + "1"})
	}
	return ks
}()

func (m *aggModel) run(steps int) {
	for step := range steps {
		// A clean restart and a crash at least once in every run (with
		// -short's few steps too), more at random.
		switch n := m.r.IntN(1000); {
		case n < 4 || step == steps/2:
			m.checkAll("before a clean restart")
			m.close()
			m.open()
			m.restarts++
			m.checkAll("after a clean restart")
			continue
		case (n < 8 || step == steps*3/4) && m.durability == tier.DurabilityWriteThrough:
			m.checkAll("before a crash")
			m.crash()
			m.crashes++
			m.checkAll("after a crash")
			continue
		}
		if m.r.IntN(12) == 0 {
			m.hfeCommand(step)
		} else {
			m.hfeAfter(m.same(m.command(), step))
		}
		if step%200 == 199 {
			m.checkAll(fmt.Sprintf("step %d", step))
		}
	}
	m.checkAll("the end")
	m.checkEmptied()
	m.t.Logf("%d steps, %d clean restarts, %d crashes; keys seen in cold alone at the checks: %d", steps, m.restarts, m.crashes, m.coldSeen)
	if m.coldSeen == 0 {
		m.fatalf("no key was in cold alone at any check: the test did not exercise it")
	}
}

// same sends args to both and compares the replies (normalized); it
// returns args and the peer's reply.
func (m *aggModel) same(args []string, step int) ([]string, *replyNode) {
	m.t.Helper()
	m.note(args)
	ours, err := m.ours.do(args)
	if err != nil {
		m.fatalf("step %d: %q: ours: %v", step, args, err)
	}
	peer, err := m.peer.do(args)
	if err != nil {
		m.fatalf("step %d: %q: redis: %v", step, args, err)
	}
	o, p := normalize(args, ours), normalize(args, peer)
	if o != p {
		m.fatalf("step %d: %s\n ours  %s\n redis %s", step, short(strings.Join(args, " ")), short(strconv.Quote(o)), short(strconv.Quote(p)))
	}
	if strings.ToUpper(args[0]) == "PEXPIREAT" && args[2] != "1" { // a few ms away: wait for it
		at, _ := strconv.ParseInt(args[2], 10, 64)
		time.Sleep(time.Until(time.UnixMilli(at)) + 10*time.Millisecond)
	}
	return args, peer
}

func (m *aggModel) note(args []string) {
	s := strings.Join(args, " ")
	m.recent = append(m.recent, short(s))
	if len(m.recent) > 30 {
		m.recent = m.recent[1:]
	}
}

func short(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

// checkEmptied deletes every key and checks that the cache then holds
// nothing and counts nothing: no DRAM bytes, live structures, keys (a
// tenant's too) or cold records left behind (nvmekv K22).
func (m *aggModel) checkEmptied() {
	m.t.Helper()
	for _, ks := range aggKeys {
		m.same(append([]string{"DEL"}, ks...), -1)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := m.tc.Stats()
		var left []string
		if st.Keys != 0 || st.DirectoryKeys != 0 {
			left = append(left, fmt.Sprintf("keys %d, in the directory %d", st.Keys, st.DirectoryKeys))
		}
		if d := st.DRAM; d.Items != 0 || d.Weight != 0 || d.LiveItems != 0 || d.LiveBytes != 0 {
			left = append(left, fmt.Sprintf("DRAM %+v", d))
		}
		for _, ts := range st.Tenants {
			if ts.Keys != 0 || ts.DRAMItems != 0 || ts.DRAMBytes != 0 {
				left = append(left, fmt.Sprintf("tenant %+v", ts))
			}
		}
		for _, tl := range st.Tiers {
			// A put cut short by a crash may leave chunks that go only at
			// the key's next chunked put (nvmekv K13): after a crash the
			// cold records are not counted.
			if tl.Items > 0 && (tl.Name != "cold" || m.crashes == 0) {
				left = append(left, fmt.Sprintf("tier %+v", tl))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			m.fatalf("every key deleted, yet the cache holds: %s", strings.Join(left, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkAll compares every key's type, contents and TTL's presence.
func (m *aggModel) checkAll(when string) {
	m.t.Helper()
	for _, ks := range aggKeys {
		for _, k := range ks {
			if m.tc.Where([]byte(k)) == "cold" {
				m.coldSeen++
			}
			m.same([]string{"TYPE", k}, -1)
			m.same([]string{"PTTL", k}, -1)
			m.same([]string{"HGETALL", k}, -1)
			m.same([]string{"LRANGE", k, "0", "-1"}, -1)
			m.same([]string{"SMEMBERS", k}, -1)
			m.same([]string{"ZRANGE", k, "0", "-1", "WITHSCORES"}, -1)
			m.checkHFE(k)
		}
	}
	// (A read that meets a delete in flight may count a phantom: not
	// checked.)
	if st := m.tc.Stats(); st.ColdErrors != 0 || st.Lost != 0 {
		m.fatalf("%s: cold errors %d, lost %d", when, st.ColdErrors, st.Lost)
	}
}

// normalize renders a reply; the orderless ones sorted (a set's members,
// a hash's fields: Redis's order is its table's), a TTL in ms > 0 as
// "ttl".
func normalize(args []string, n *replyNode) string {
	if n == nil {
		return "<nil>"
	}
	switch strings.ToUpper(args[0]) {
	case "SMEMBERS", "HKEYS", "HVALS", "SINTER", "SUNION", "SDIFF":
		slices.SortFunc(n.kids, func(a, b *replyNode) int { return strings.Compare(a.String(), b.String()) })
	case "HGETALL":
		pairs := make([][2]*replyNode, 0, len(n.kids)/2)
		for i := 0; i+1 < len(n.kids); i += 2 {
			pairs = append(pairs, [2]*replyNode{n.kids[i], n.kids[i+1]})
		}
		slices.SortFunc(pairs, func(a, b [2]*replyNode) int { return strings.Compare(a[0].body, b[0].body) })
		n.kids = n.kids[:0]
		for _, p := range pairs {
			n.kids = append(n.kids, p[0], p[1])
		}
	case "PTTL", "TTL":
		if v, err := strconv.Atoi(strings.TrimSpace(n.head[1:])); err == nil && v > 0 {
			return "ttl"
		}
	}
	return n.String()
}
