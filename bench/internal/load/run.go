package load

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Counts are what a load counted, shared by its goroutines.
type Counts struct {
	Mismatches, Errors atomic.Int64
	shown              atomic.Int64
}

// Fail counts err (a mismatch if it wraps ErrMismatch, else an error) and
// prints the first few of them to stderr.
func (c *Counts) Fail(err error) {
	if errors.Is(err, ErrMismatch) {
		c.Mismatches.Add(1)
	} else {
		c.Errors.Add(1)
	}
	if c.shown.Add(1) <= 10 {
		fmt.Fprintln(os.Stderr, "load:", err)
	}
}

// ExitCode is 1 if anything failed: a mismatch, or an error from a server.
func (c *Counts) ExitCode() int {
	if c.Mismatches.Load() > 0 || c.Errors.Load() > 0 {
		return 1
	}
	return 0
}

// Each runs f on conns goroutines, each with its own connection from d,
// and waits for them. A dial error is returned; f's errors are f's to count.
func Each(d Dialer, conns int, f func(g int, c Conn)) error {
	cs := make([]Conn, conns)
	for g := range cs {
		c, err := d.Dial()
		if err != nil {
			for _, c := range cs[:g] {
				c.Close()
			}
			return err
		}
		cs[g] = c
	}
	var wg sync.WaitGroup
	for g, c := range cs {
		wg.Go(func() { f(g, c) })
	}
	wg.Wait()
	for _, c := range cs {
		c.Close()
	}
	return nil
}

// Populate writes every key 0..n-1 once (the next version of each, size
// bytes) from conns goroutines, batch keys per pipelined round trip;
// goroutine g writes the keys i with i%conns == g. A failed batch is
// counted in cnt.
func Populate(d Dialer, vs *Versions, prefix string, n, size, conns, batch int, cnt *Counts) error {
	return Each(d, conns, func(g int, c Conn) {
		ctx := context.Background()
		idx := make([]int, 0, batch)
		keys := make([]string, 0, batch)
		vals := make([][]byte, batch)
		for j := range vals {
			vals[j] = make([]byte, size)
		}
		flush := func() {
			if len(idx) == 0 {
				return
			}
			if err := vs.WriteBatch(idx, vals[:len(idx)], func() error {
				return c.SetMany(ctx, keys, vals[:len(idx)])
			}); err != nil {
				cnt.Fail(fmt.Errorf("populate: %w", err))
			}
			idx, keys = idx[:0], keys[:0]
		}
		for i := g; i < n; i += conns {
			idx = append(idx, i)
			keys = append(keys, Key(prefix, i))
			if len(idx) == batch {
				flush()
			}
		}
		flush()
	})
}

// Latencies collects durations from several goroutines.
type Latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

// Add appends the durations of one goroutine.
func (l *Latencies) Add(d []time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d...)
	l.mu.Unlock()
}

// Merge adds every duration of o.
func (l *Latencies) Merge(o *Latencies) {
	o.mu.Lock()
	d := slices.Clone(o.d)
	o.mu.Unlock()
	l.Add(d)
}

// Quantile is the q-quantile (0..1) of what was added, nearest rank.
func (l *Latencies) Quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	if !sort.SliceIsSorted(l.d, func(i, j int) bool { return l.d[i] < l.d[j] }) {
		slices.Sort(l.d)
	}
	k := int(math.Ceil(q*float64(len(l.d)))) - 1
	return l.d[max(0, min(k, len(l.d)-1))]
}

// Result prints one line "RESULT k=v k=v ..." for the scripts, in the
// order given (pairs of name and value).
func Result(kv ...any) {
	var b strings.Builder
	b.WriteString("RESULT")
	for i := 0; i+1 < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case float64:
			fmt.Fprintf(&b, " %s=%.4f", kv[i], v)
		default:
			fmt.Fprintf(&b, " %s=%v", kv[i], v)
		}
	}
	fmt.Println(b.String())
}

// Flags are the flags both load clients take.
type Flags struct {
	Socket string
	Keys   int
	Size   int // bytes per value
	Conns  int
	Theta  float64
	Seed   uint64
	Prefix string
}

// RegisterFlags defines the common flags on flag.CommandLine, with the
// client's own defaults for -conns and -prefix.
func RegisterFlags(conns int, prefix string) *Flags {
	f := &Flags{}
	flag.StringVar(&f.Socket, "socket", "", "Unix socket of the server")
	flag.IntVar(&f.Keys, "keys", 100000, "key space")
	flag.IntVar(&f.Size, "value-bytes", 1536, "bytes per value, at least 16 (1536 = 768 × fp16)")
	flag.IntVar(&f.Conns, "conns", conns, "connections, one goroutine each")
	flag.Float64Var(&f.Theta, "theta", 0.99, "Zipf skew of the key choice")
	flag.Uint64Var(&f.Seed, "seed", 1, "seed of the key choice (vary it per round)")
	flag.StringVar(&f.Prefix, "prefix", prefix, "key prefix")
	return f
}

// Valid says whether the common flags can drive a load.
func (f *Flags) Valid() bool {
	return f.Socket != "" && f.Size >= HeaderBytes && f.Keys >= 2 && f.Conns >= 1
}
