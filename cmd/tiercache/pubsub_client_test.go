package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisPubSubAndScripts (issue 33): go-redis's PubSub (channels and
// patterns, RESP2 and RESP3) receives what PUBLISH sends, with keyspace
// notifications turned on by CONFIG SET; its Script runs through EVALSHA,
// falling back to EVAL after SCRIPT FLUSH.
func TestGoRedisPubSubAndScripts(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			ctx := context.Background()
			rc := newClient(t, sc, proto)
			if err := rc.ConfigSet(ctx, "notify-keyspace-events", "KEA").Err(); err != nil {
				t.Fatal(err)
			}
			ps := rc.PSubscribe(ctx, "__keyevent@0__:*")
			defer ps.Close()
			if err := ps.Subscribe(ctx, "jobs"); err != nil {
				t.Fatal(err)
			}
			ch := ps.Channel()
			time.Sleep(50 * time.Millisecond) // the subscriptions are made
			if n, err := rc.Publish(ctx, "jobs", "embed:42").Result(); err != nil || n != 1 {
				t.Fatalf("PUBLISH: %d %v", n, err)
			}
			key := fmt.Sprintf("doc:%d", proto)
			rc.Set(ctx, key, "v", 0)
			want := map[string]string{"jobs": "embed:42", "__keyevent@0__:set": key}
			for len(want) > 0 {
				select {
				case m := <-ch:
					if want[m.Channel] == m.Payload {
						delete(want, m.Channel)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("messages not received: %v", want)
				}
			}
			capped := redis.NewScript(`local n = redis.call('incr', KEYS[1]); if n > tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1]); return tonumber(ARGV[1]) end; return n`)
			for i := 1; i <= 5; i++ {
				n, err := capped.Run(ctx, rc, []string{key + ":n"}, 3).Int()
				if err != nil || n != min(i, 3) {
					t.Fatalf("capped counter run %d: %d %v", i, n, err)
				}
				if i == 2 {
					rc.ScriptFlush(ctx) // the next Run gets NOSCRIPT and sends EVAL
				}
			}
		})
	}
}
