package pubsub

import (
	"path"
	"testing"
)

type sink struct {
	got    []string
	refuse bool
	id     string
	log    *[]string // the ids of the sinks handed a message, in order
}

func (s *sink) Deliver(msg []byte) bool {
	if s.refuse {
		return false
	}
	s.got = append(s.got, string(msg))
	if s.log != nil {
		*s.log = append(*s.log, s.id)
	}
	return true
}

func glob(p, s string) bool { ok, _ := path.Match(p, s); return ok }

func TestPublishOrderAndCount(t *testing.T) {
	r := New(Options{Match: glob})
	a, b, c := &sink{}, &sink{}, &sink{}
	r.Subscribe(b, "ch", Channel)
	r.Subscribe(a, "ch", Channel)
	r.Subscribe(c, "c*", Pattern)
	if n := r.Publish([]byte("ch"), []byte("hi")); n != 3 {
		t.Fatalf("Publish reached %d, want 3", n)
	}
	want := "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
	if len(a.got) != 1 || a.got[0] != want || len(b.got) != 1 {
		t.Fatalf("channel subscribers got %q, %q", a.got, b.got)
	}
	if wantP := "*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nhi\r\n"; len(c.got) != 1 || c.got[0] != wantP {
		t.Fatalf("pattern subscriber got %q", c.got)
	}
	if n := r.Publish([]byte("other"), []byte("x")); n != 0 {
		t.Fatalf("Publish to no one reached %d", n)
	}
}

func TestSubscriptionCounts(t *testing.T) {
	r := New(Options{Match: glob})
	a := &sink{}
	// The shard channels are counted apart from the channels and
	// patterns, as redis-server 7.0 counts them; the total is all three.
	for i, c := range []struct {
		name        string
		kind        Kind
		sub         bool
		want, total int
	}{{"x", Channel, true, 1, 1}, {"x", Channel, true, 1, 1}, {"p*", Pattern, true, 2, 2}, {"y", Channel, true, 3, 3},
		{"x", Shard, true, 1, 4}, {"x", Shard, true, 1, 4}, {"z", Shard, true, 2, 5},
		{"x", Channel, false, 2, 4}, {"nope", Channel, false, 2, 4}, {"p*", Pattern, false, 1, 3},
		{"y", Shard, false, 2, 3}, {"z", Shard, false, 1, 2}} {
		var n, total int
		if c.sub {
			n, total = r.Subscribe(a, c.name, c.kind)
		} else {
			n, total = r.Unsubscribe(a, c.name, c.kind)
		}
		if n != c.want || total != c.total {
			t.Fatalf("step %d: count %d total %d, want %d %d", i, n, total, c.want, c.total)
		}
	}
	if got := r.Channels(Channel, nil); len(got) != 1 || got[0] != "y" {
		t.Fatalf("channels %q", got)
	}
	if got := r.Channels(Shard, nil); len(got) != 1 || got[0] != "x" {
		t.Fatalf("shard channels %q", got)
	}
	if r.NumPat() != 0 || r.NumSub(Channel, "y") != 1 || r.NumSub(Shard, "y") != 0 || r.NumSub(Shard, "x") != 1 {
		t.Fatalf("numpat %d numsub %d shardnumsub %d", r.NumPat(), r.NumSub(Channel, "y"), r.NumSub(Shard, "x"))
	}
	if own := r.Of(a); len(own.Channels) != 1 || len(own.Shards) != 1 || own.Total() != 2 || own.CountOf(Shard) != 1 {
		t.Fatalf("Of: %+v", own)
	}
	r.Leave(a)
	if st := r.Stats(); st.Channels != 0 || st.Patterns != 0 || st.ShardChannels != 0 {
		t.Fatalf("after Leave: %+v", st)
	}
	if own := r.Of(a); own.Total() != 0 {
		t.Fatalf("after Leave: %+v", own)
	}
}

// TestShardChannelsApart checks PS4: PublishShard reaches the shard
// channel's subscribers only, as smessage, and Publish none of them,
// though a channel and a pattern of the same name have subscribers.
func TestShardChannelsApart(t *testing.T) {
	r := New(Options{Match: glob})
	var order []string
	sa, sb, ch, pat := &sink{id: "a", log: &order}, &sink{id: "b", log: &order}, &sink{}, &sink{}
	r.Subscribe(sb, "x", Shard)
	r.Subscribe(sa, "x", Shard)
	r.Subscribe(ch, "x", Channel)
	r.Subscribe(pat, "*", Pattern)
	if n := r.PublishShard([]byte("x"), []byte("hi")); n != 2 {
		t.Fatalf("PublishShard reached %d, want 2", n)
	}
	want := "*3\r\n$8\r\nsmessage\r\n$1\r\nx\r\n$2\r\nhi\r\n"
	if len(sa.got) != 1 || sa.got[0] != want || len(sb.got) != 1 || sb.got[0] != want {
		t.Fatalf("shard subscribers got %q, %q", sa.got, sb.got)
	}
	if len(order) != 2 || order[0] != "b" {
		t.Fatalf("handed in the order %q, want b (subscribed first) then a", order)
	}
	if len(ch.got) != 0 || len(pat.got) != 0 {
		t.Fatalf("SPUBLISH reached a channel (%q) or pattern (%q) subscriber", ch.got, pat.got)
	}
	if n := r.Publish([]byte("x"), []byte("m")); n != 2 {
		t.Fatalf("Publish reached %d, want 2 (the channel's and the pattern's)", n)
	}
	if len(sa.got) != 1 || len(sb.got) != 1 {
		t.Fatalf("PUBLISH reached a shard subscriber: %q, %q", sa.got, sb.got)
	}
	if n := r.PublishShard([]byte("y"), []byte("m")); n != 0 || len(pat.got) != 1 {
		t.Fatalf("PublishShard to no one reached %d (pattern got %q)", n, pat.got)
	}
	if st := r.Stats(); st.Published != 3 || st.Delivered != 4 || st.ShardChannels != 1 || st.Channels != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRefusedMessagesCounted(t *testing.T) {
	r := New(Options{Match: glob})
	r.Subscribe(&sink{refuse: true}, "c", Channel)
	r.Subscribe(&sink{}, "c", Channel)
	r.Publish([]byte("c"), []byte("m"))
	if st := r.Stats(); st.Delivered != 1 || st.Dropped != 1 || st.Published != 1 {
		t.Fatalf("stats %+v, want 1 delivered, 1 dropped", st)
	}
}
