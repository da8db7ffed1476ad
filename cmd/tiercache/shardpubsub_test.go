package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// goRedisShardedTranscript drives go-redis's ClusterClient's sharded
// pub/sub seeded with addrs, in RESP proto: SSubscribe of two channels of
// one slot (hash tags), SPublish to each and the smessages received, a
// PUBLISH of the same name (another namespace: not received), an
// SSubscribe of two slots (CROSSSLOT) and SUnsubscribe.
func goRedisShardedTranscript(t *testing.T, addrs []string, pw string, proto int) (lines []string) {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Password: pw, Protocol: proto, MaxRedirects: 3,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	defer c.Close()
	log := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	next := func(ps *redis.PubSub) string {
		m, err := ps.ReceiveTimeout(ctx, 10*time.Second)
		switch m := m.(type) {
		case *redis.Subscription:
			return fmt.Sprintf("%s %s %d", m.Kind, m.Channel, m.Count)
		case *redis.Message:
			return fmt.Sprintf("message %s %s", m.Channel, m.Payload)
		}
		return fmt.Sprintf("%T %s", m, errText(err))
	}
	ps := c.SSubscribe(ctx, "orders", "{orders}:eu")
	defer ps.Close()
	log("%s; %s", next(ps), next(ps))
	for _, ch := range []string{"orders", "{orders}:eu"} {
		n, err := c.SPublish(ctx, ch, "m:"+ch).Result()
		log("spublish %s: %d %v, then %s", ch, n, err, next(ps))
	}
	n, err := c.Publish(ctx, "orders", "ordinary").Result()
	log("publish orders: %d %v", n, err)
	across := c.SSubscribe(ctx, "a", "b") // slots 15495 and 3300
	log("ssubscribe across slots: %s", next(across))
	across.Close()
	log("sunsubscribe: %v, %s", ps.SUnsubscribe(ctx, "orders"), next(ps))
	n, err = c.SPublish(ctx, "orders", "after").Result()
	log("spublish after: %d %v", n, err)
	n, err = c.SPublish(ctx, "{orders}:eu", "still").Result()
	log("spublish to the one left: %d %v, then %s", n, err, next(ps))
	return lines
}

// TestGoRedisClusterShardedPubSub checks C20 for sharded pub/sub (server
// S58): go-redis's ClusterClient SSubscribe and SPublish get, step for
// step, what they get from a real Redis Cluster, in RESP2 and RESP3.
func TestGoRedisClusterShardedPubSub(t *testing.T) {
	peerAddrs := clusterPeer(t)
	addr, pw := clusterSidecar(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			peer := goRedisShardedTranscript(t, peerAddrs, "pw", proto)
			ours := goRedisShardedTranscript(t, []string{addr}, pw, proto)
			t.Logf("go-redis sharded pub/sub against both: %q", ours)
			if !slices.Equal(ours, peer) {
				t.Errorf("go-redis ClusterClient sharded pub/sub:\n tiercache:     %q\n Redis Cluster: %q", ours, peer)
			}
		})
	}
}
