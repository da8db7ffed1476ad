package pubsub

import (
	"path"
	"testing"
)

type sink struct {
	got    []string
	refuse bool
}

func (s *sink) Deliver(msg []byte) bool {
	if s.refuse {
		return false
	}
	s.got = append(s.got, string(msg))
	return true
}

func glob(p, s string) bool { ok, _ := path.Match(p, s); return ok }

func TestPublishOrderAndCount(t *testing.T) {
	r := New(Options{Match: glob})
	a, b, c := &sink{}, &sink{}, &sink{}
	r.Subscribe(b, "ch", false)
	r.Subscribe(a, "ch", false)
	r.Subscribe(c, "c*", true)
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
	for i, c := range []struct {
		name    string
		pattern bool
		sub     bool
		want    int
	}{{"x", false, true, 1}, {"x", false, true, 1}, {"p*", true, true, 2}, {"y", false, true, 3},
		{"x", false, false, 2}, {"nope", false, false, 2}, {"p*", true, false, 1}} {
		var n int
		if c.sub {
			n = r.Subscribe(a, c.name, c.pattern)
		} else {
			n = r.Unsubscribe(a, c.name, c.pattern)
		}
		if n != c.want {
			t.Fatalf("step %d: count %d, want %d", i, n, c.want)
		}
	}
	if got := r.Channels(nil); len(got) != 1 || got[0] != "y" {
		t.Fatalf("channels %q", got)
	}
	if r.NumPat() != 0 || r.NumSub("y") != 1 {
		t.Fatalf("numpat %d numsub %d", r.NumPat(), r.NumSub("y"))
	}
	r.Leave(a)
	if st := r.Stats(); st.Channels != 0 || st.Patterns != 0 {
		t.Fatalf("after Leave: %+v", st)
	}
}

func TestRefusedMessagesCounted(t *testing.T) {
	r := New(Options{Match: glob})
	r.Subscribe(&sink{refuse: true}, "c", false)
	r.Subscribe(&sink{}, "c", false)
	r.Publish([]byte("c"), []byte("m"))
	if st := r.Stats(); st.Delivered != 1 || st.Dropped != 1 || st.Published != 1 {
		t.Fatalf("stats %+v, want 1 delivered, 1 dropped", st)
	}
}
