package server

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The differential machinery of the set and sorted-set tests: random
// commands run on redis-server 7.0 and on tiercache, and each reply
// compared byte for byte, except where Redis's own order or choice is
// free (a set's members, a random pick), which is compared as a sorted
// list or by its shape.

// replyNode is a parsed RESP2/RESP3 reply.
type replyNode struct {
	head string // the first line, with its type byte
	body string // a bulk's bytes
	kids []*replyNode
}

func parseReply(s string) *replyNode {
	n, _ := parseReplyAt(bufio.NewReader(strings.NewReader(s)))
	return n
}

func parseReplyAt(br *bufio.Reader) (*replyNode, error) {
	l, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n := &replyNode{head: l}
	k, _ := strconv.Atoi(strings.TrimSpace(l[1:]))
	switch l[0] {
	case '$', '=', '!':
		if k >= 0 {
			b := make([]byte, k+2)
			if _, err := io.ReadFull(br, b); err != nil {
				return nil, err
			}
			n.body = string(b)
		}
	case '*', '%', '~':
		if l[0] == '%' {
			k *= 2
		}
		for i := 0; i < k; i++ {
			kid, err := parseReplyAt(br)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
		}
	}
	return n, nil
}

func (n *replyNode) String() string {
	var sb strings.Builder
	sb.WriteString(n.head)
	sb.WriteString(n.body)
	for _, k := range n.kids {
		sb.WriteString(k.String())
	}
	return sb.String()
}

// sorted is the reply with its top-level elements (or, at depth 1, the
// elements of its second element: a scan's) in sorted order.
func (n *replyNode) sorted(depth int) string {
	if n == nil {
		return "<nil>"
	}
	t := n
	if depth == 1 && len(n.kids) == 2 {
		t = n.kids[1]
	}
	kids := make([]string, len(t.kids))
	for i, k := range t.kids {
		kids[i] = k.String()
	}
	slices.Sort(kids)
	if t != n {
		return n.head + n.kids[0].String() + t.head + strings.Join(kids, "")
	}
	return n.head + strings.Join(kids, "")
}

// shape is a random reply's type and length, or its text when it is an
// error or a nil.
func (n *replyNode) shape() string {
	if n == nil {
		return "<nil>"
	}
	if n.head[0] == '$' && n.head != "$-1\r\n" {
		return "$"
	}
	if n.head[0] == '-' || len(n.kids) == 0 {
		return n.String()
	}
	return fmt.Sprintf("%c%d", n.head[0], len(n.kids))
}

// diffKind says how a command's replies compare.
type diffKind uint8

const (
	diffExact  diffKind = iota
	diffSorted          // the elements in any order
	diffScan            // a scan: cursor, then elements in any order
	diffShape           // a random pick: its type and length
	diffResync          // random and changing: shape, then the key copied from redis-server
	diffNear            // exact, but numbers may differ in their last digit (geo distances)
)

// diffSeed is the random seed of a differential test (TIERCACHE_SEED
// reruns one).
func diffSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TIERCACHE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (TIERCACHE_SEED reruns it)", seed)
	return seed
}

// diffPair is one round of a differential test: a connection to
// redis-server (ref) and one to tiercache (got), both flushed, and in
// RESP3 on odd rounds, so that the rounds alternate RESP2 and RESP3.
type diffPair struct{ ref, got *exactConn }

func newDiffPair(t *testing.T, redisSock, ourSock string, round int) diffPair {
	p := diffPair{dialExact(t, redisSock), dialExact(t, ourSock)}
	p.both("FLUSHALL")
	if round%2 == 1 {
		p.both("HELLO", "3")
	}
	return p
}

// both sends args to each server and returns their replies.
func (p diffPair) both(args ...string) (string, string) { return p.ref.do(args...), p.got.do(args...) }

// typedDiff runs rounds of random commands from gen on both servers and
// compares each reply as kind says, then the state of keys through
// state's command.
type typedDiff struct {
	t      *testing.T
	gen    func(r *rand.Rand) ([]string, diffKind)
	keys   []string
	state  func(key string) []string // a command whose reply is the key's whole state
	resync func(ref, got *exactConn, key string)
	setup  [][]string
	// fill, when set, adds each round's random keys after setup (both
	// sends a command to both servers).
	fill func(r *rand.Rand, both func(args ...string))
}

func (d *typedDiff) run(rounds, steps int) {
	t := d.t
	redisSock := startRedis(t)
	_, tcSock := startServerWith(t, newTierCache(t), nil)
	r := rand.New(rand.NewPCG(diffSeed(t), 32))
	for round := 0; round < rounds; round++ {
		p := newDiffPair(t, redisSock, tcSock, round)
		ref, got, both := p.ref, p.got, p.both
		for _, c := range d.setup {
			both(c...)
		}
		if d.fill != nil {
			d.fill(r, func(args ...string) {
				if w, h := both(args...); w != h {
					t.Fatalf("setup %q: redis-server %q, tiercache %q", args, w, h)
				}
			})
		}
		for i := 0; i < steps; i++ {
			cmd, kind := d.gen(r)
			if os.Getenv("DIFF_TRACE") != "" {
				t.Log(cmd)
			}
			multi := r.IntN(15) == 0
			if multi {
				both("MULTI")
			}
			want, have := both(cmd...)
			if multi {
				want, have = both("EXEC")
				if kind != diffExact {
					kind = diffResync
				}
			}
			w, h := parseReply(want), parseReply(have)
			var same bool
			switch kind {
			case diffExact:
				same = want == have
			case diffSorted:
				same = w.sorted(0) == h.sorted(0)
			case diffScan:
				same = w.sorted(1) == h.sorted(1)
			case diffShape, diffResync:
				same = w.shape() == h.shape()
			case diffNear:
				same = nearReplies(want, have)
			}
			if !same {
				t.Fatalf("round %d step %d %q (multi %v): redis-server %q, tiercache %q", round, i, cmd, multi, want, have)
			}
			if kind == diffResync {
				for _, k := range d.keys {
					d.resync(ref, got, k)
				}
			}
			for _, k := range d.keys {
				if w, h := both(d.state(k)...); parseReply(w).sorted(0) != parseReply(h).sorted(0) {
					t.Fatalf("round %d step %d %q: %s is %q in redis-server, %q in tiercache", round, i, cmd, k, w, h)
				}
			}
		}
	}
}
