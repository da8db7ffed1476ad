package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"go.uber.org/zap"

	"github.com/tiercache/tiercache/remote/redistest"
)

// clusterSidecar starts a sidecar with server.cluster emulated on a
// loopback TCP port and returns its address and password.
func clusterSidecar(t *testing.T) (addr, pw string) {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.Server.Cluster, cfg.Server.TCP, cfg.Server.RequirePass = "emulated", "127.0.0.1:0", "pw"
	sc := startTestSidecar(t, cfg)
	for _, a := range sc.srv.Addrs() {
		if ta, ok := a.(*net.TCPAddr); ok {
			return ta.String(), "pw"
		}
	}
	t.Fatal("the sidecar serves no TCP address")
	return "", ""
}

// clusterPeer is a real Redis Cluster (3 masters, redis-server 7.0) to
// hold each client's transcript against.
func clusterPeer(t *testing.T) []string {
	t.Helper()
	return redistest.StartCluster(t, 3, 0, "--requirepass", "pw").Addrs()
}

// errText is an error's text, "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// goRedisClusterTranscript drives a go-redis ClusterClient seeded with
// addrs: MGET of one slot (hash tags) and across slots, a pipeline of 400
// commands over every node, MSET and DEL across slots, transactions, and
// what it learnt of the topology. Keys: a 15495, b 3300, x 16287, y 12222.
func goRedisClusterTranscript(t *testing.T, addrs []string, pw string) (lines []string, slots []redis.ClusterSlot) {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Password: pw, MaxRedirects: 3,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	defer c.Close()
	log := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	log("flushall %v", c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.FlushAll(ctx).Err() }))
	log("mset tagged %v", c.MSet(ctx, "{u}a", "1", "{u}b", "2").Err())
	v, err := c.MGet(ctx, "{u}a", "{u}b", "{u}none").Result()
	log("mget tagged %q %v", v, err)
	_, err = c.MGet(ctx, "a", "b").Result()
	log("mget across slots: %s", errText(err))
	log("mset across slots: %s", errText(c.MSet(ctx, "x", "1", "y", "2").Err()))
	log("del across slots: %s", errText(c.Del(ctx, "x", "y").Err()))
	log("exists across slots: %s", errText(c.Exists(ctx, "a", "b").Err()))
	log("rename across slots: %s", errText(c.Rename(ctx, "{u}a", "x").Err()))
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 200 {
			p.Set(ctx, fmt.Sprintf("k%d", i), i, time.Hour)
		}
		for i := range 200 {
			p.Get(ctx, fmt.Sprintf("k%d", i))
		}
		return nil
	})
	bad := 0
	for i, cmd := range cmds[200:] {
		if s, e := cmd.(*redis.StringCmd).Result(); e != nil || s != fmt.Sprint(i) {
			bad++
		}
	}
	log("pipeline of 400: %v, %d of %d wrong", err, bad, len(cmds))
	cmds, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "{u}n")
		p.Incr(ctx, "{u}n")
		return nil
	})
	log("transaction on one slot: %v %d", err, len(cmds))
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "{u}n")
		p.Set(ctx, "x", "tx", 0) // another slot
		return nil
	})
	log("transaction across slots: %s", errText(err))
	log("get after: %q", c.MGet(ctx, "{u}n", "{u}a").Val())
	log("watch across slots: %s", errText(c.Watch(ctx, func(*redis.Tx) error { return nil }, "a", "b")))
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.Get(ctx, "{u}n").Int()
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error { return p.Set(ctx, "{u}n", n*10, 0).Err() })
		return err
	}, "{u}n", "{u}a")
	log("watch one slot: %v, n=%s", err, c.Get(ctx, "{u}n").Val())
	raw := c.Do(ctx, "MGET", "{u}a", "b").Err()
	log("raw MGET across slots: %s", errText(raw))
	slots, err = c.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatalf("CLUSTER SLOTS: %v", err)
	}
	return lines, slots
}

// TestGoRedisClusterClient checks C20 with go-redis's ClusterClient: the
// sidecar in cluster mode answers each step as a real Redis Cluster does
// (CROSSSLOT refusals word for word), and its topology is one node
// owning every slot at its TCP address.
func TestGoRedisClusterClient(t *testing.T) {
	peer, _ := goRedisClusterTranscript(t, clusterPeer(t), "pw")
	addr, pw := clusterSidecar(t)
	ours, slots := goRedisClusterTranscript(t, []string{addr}, pw)
	t.Logf("go-redis ClusterClient against both: %q", ours)
	if !slices.Equal(ours, peer) {
		t.Errorf("go-redis ClusterClient:\n tiercache:    %q\n Redis Cluster: %q", ours, peer)
	}
	if len(slots) != 1 || slots[0].Start != 0 || slots[0].End != 16383 || len(slots[0].Nodes) != 1 || slots[0].Nodes[0].Addr != addr {
		t.Errorf("CLUSTER SLOTS: %+v, want one node %s owning 0-16383", slots, addr)
	}
	if !strings.Contains(strings.Join(peer, "\n"), "CROSSSLOT Keys in request don't hash to the same slot") {
		t.Errorf("the peer's transcript has no CROSSSLOT refusal: %q", peer)
	}
}

// rueidisClusterTranscript drives a rueidis cluster client (InitAddress,
// no ForceSingleClient) seeded with addrs, topology from CLUSTER SLOTS or
// (shards) CLUSTER SHARDS.
func rueidisClusterTranscript(t *testing.T, addrs []string, pw string, shards bool) []string {
	t.Helper()
	ctx := context.Background()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs, Password: pw, DisableCache: true,
		ClusterOption: rueidis.ClusterOption{PreferClusterShards: shards}})
	if err != nil {
		t.Fatalf("rueidis: %v", err)
	}
	defer c.Close()
	var lines []string
	log := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	if typ := fmt.Sprintf("%T", c); typ != "*rueidis.clusterClient" {
		t.Fatalf("rueidis made a %s, not its cluster client", typ) // it falls back to a single client when CLUSTER fails
	}
	b := c.B()
	for _, r := range c.DoMulti(ctx, b.Set().Key("{u}a").Value("1").Build(), b.Set().Key("{u}b").Value("2").Build(),
		b.Del().Key("{u}n").Build()) {
		log("set %v", r.Error())
	}
	v, err := c.Do(ctx, b.Mget().Key("{u}a", "{u}b", "{u}none").Build()).ToArray()
	got := []string{}
	for _, m := range v {
		s, e := m.ToString()
		got = append(got, s+errText(e))
	}
	log("mget tagged %q %v", got, err)
	m, err := rueidis.MGet(c, ctx, []string{"{u}a", "b", "x"})
	log("MGet helper over slots: %d keys %v", len(m), err)
	log("mget across slots: %s", errText(c.Do(ctx, b.Arbitrary("MGET").Args("a", "b").Build()).Error()))
	log("mset across slots: %s", errText(c.Do(ctx, b.Arbitrary("MSET").Args("x", "1", "y", "2").Build()).Error()))
	var cmds rueidis.Commands
	for i := range 200 {
		cmds = append(cmds, b.Set().Key(fmt.Sprintf("k%d", i)).Value(fmt.Sprint(i)).Build())
	}
	for i := range 200 {
		cmds = append(cmds, b.Get().Key(fmt.Sprintf("k%d", i)).Build())
	}
	bad := 0
	for i, r := range c.DoMulti(ctx, cmds...)[200:] {
		if s, e := r.ToString(); e != nil || s != fmt.Sprint(i) {
			bad++
		}
	}
	log("pipeline of 400: %d wrong", bad)
	err = c.Dedicated(func(d rueidis.DedicatedClient) error {
		rs := d.DoMulti(ctx, b.Multi().Build(), b.Incr().Key("{u}n").Build(), b.Incr().Key("{u}n").Build(), b.Exec().Build())
		for _, r := range rs {
			if err := r.Error(); err != nil {
				return err
			}
		}
		return nil
	})
	n, _ := c.Do(ctx, b.Get().Key("{u}n").Build()).ToString()
	log("transaction on one slot: %v n=%s", err, n)
	return lines
}

// TestRueidisClusterClient checks C20 with rueidis in cluster mode, its
// topology read from CLUSTER SLOTS and from CLUSTER SHARDS.
func TestRueidisClusterClient(t *testing.T) {
	peerAddrs := clusterPeer(t)
	addr, pw := clusterSidecar(t)
	for _, shards := range []bool{false, true} {
		peer := rueidisClusterTranscript(t, peerAddrs, "pw", shards)
		ours := rueidisClusterTranscript(t, []string{addr}, pw, shards)
		t.Logf("rueidis (shards %v) against both: %q", shards, ours)
		if !slices.Equal(ours, peer) {
			t.Errorf("rueidis (shards %v):\n tiercache:    %q\n Redis Cluster: %q", shards, ours, peer)
		}
	}
}

// TestClusterConfig checks C20's configuration: server.cluster is "" or
// emulated (TIERCACHE_SERVER_CLUSTER), needs server.tcp, and
// cluster_announce reaches the server's options; each problem is an error
// naming its key.
func TestClusterConfig(t *testing.T) {
	c := defaultConfig()
	if errs := c.applyEnv([]string{"TIERCACHE_SERVER_CLUSTER=emulated", "TIERCACHE_SERVER_TCP=127.0.0.1:6380",
		"TIERCACHE_SERVER_REQUIREPASS=pw", "TIERCACHE_SERVER_CLUSTER_ANNOUNCE=10.0.0.7:7000"}); len(errs) > 0 {
		t.Fatal(errs)
	}
	b, err := c.build(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if !b.server.Cluster || b.server.ClusterAnnounce != "10.0.0.7:7000" {
		t.Errorf("server options: cluster %v, announce %q", b.server.Cluster, b.server.ClusterAnnounce)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"server:\n  cluster: yes\n  tcp: 127.0.0.1:6380\n  requirepass: pw\n", `server.cluster "yes"`},
		{"server:\n  cluster: emulated\n", "server.cluster emulated needs server.tcp"},
		{"server:\n  cluster: emulated\n  tcp: 127.0.0.1:6380\n  requirepass: pw\n  cluster_announce: cache.local\n", "not an IP address"},
	} {
		c := defaultConfig()
		if err := c.loadYAML([]byte(tc.yaml), "test"); err != nil {
			t.Fatal(err)
		}
		_, err := c.build(zap.NewNop())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		} else if strings.Contains(err.Error(), "problems") {
			t.Errorf("%q: one problem said more than once: %v", tc.yaml, err)
		}
	}
}

// TestClusterOnTheUnixSocket checks what C20 says of the Unix socket in
// cluster mode: the node announces its TCP address (127.0.0.1 and the TCP
// port, the only address CLUSTER SLOTS can name), so a cluster client
// seeded with the socket reaches the node only with a dialer that dials
// the socket whatever address it is given (go-redis's ClusterClient with
// such a Dialer), and rueidis on the socket is given ForceSingleClient as
// README shows; the cluster rules (CROSSSLOT) hold on the socket too.
func TestClusterOnTheUnixSocket(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Server.Cluster, cfg.Server.TCP, cfg.Server.RequirePass = "emulated", "127.0.0.1:0", "pw"
	sc := startTestSidecar(t, cfg)
	sock, port := cfg.Server.Socket, ""
	for _, a := range sc.srv.Addrs() {
		if ta, ok := a.(*net.TCPAddr); ok {
			port = fmt.Sprint(ta.Port)
		}
	}
	ctx := context.Background()
	dialSock := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}
	gc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"tiercache:0"}, Dialer: dialSock})
	defer gc.Close()
	slots, err := gc.ClusterSlots(ctx).Result()
	if err != nil || len(slots) != 1 || slots[0].Nodes[0].Addr != "127.0.0.1:"+port {
		t.Fatalf("CLUSTER SLOTS on the socket: %+v, %v; want the node at 127.0.0.1:%s", slots, err, port)
	}
	if err := gc.MSet(ctx, "{u}a", "1", "{u}b", "2").Err(); err != nil {
		t.Fatalf("go-redis ClusterClient on the socket: MSET of one slot: %v", err)
	}
	if v, err := gc.MGet(ctx, "{u}a", "{u}b").Result(); err != nil || fmt.Sprint(v) != "[1 2]" {
		t.Errorf("go-redis ClusterClient on the socket: MGET %v, %v", v, err)
	}
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{sock}, ForceSingleClient: true,
		DialCtxFn: func(ctx context.Context, a string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return d.DialContext(ctx, "unix", a)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if v, err := rc.Do(ctx, rc.B().Get().Key("{u}a").Build()).ToString(); v != "1" || err != nil {
		t.Errorf("rueidis (ForceSingleClient) on the socket: GET %q, %v", v, err)
	}
	if err := rc.Do(ctx, rc.B().Mget().Key("a", "b").Build()).Error(); err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
		t.Errorf("rueidis on the socket: MGET across slots: %v, want CROSSSLOT", err)
	}
}
