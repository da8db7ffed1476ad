package server

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tiercache/tiercache/resp"
)

// CONFIG SET of what can change while the server runs: the keyspace
// events, the pub/sub output limits, the tracking table's bound, the
// busy-script threshold and the slow log's two settings take effect at
// once; Redis's encoding knobs
// (which Redis's own test suite sets) are accepted and kept for CONFIG
// GET, and change nothing in tiercache, whose values have one encoding
// each, but hll-sparse-max-bytes, which PFADD and PFMERGE follow as
// Redis does. Every other parameter CONFIG GET shows is refused with the
// reason. As in Redis 7.0, a CONFIG SET of several parameters applies
// all of them or none.

// settable is a parameter CONFIG SET may change.
type settable struct {
	name, alias string
	get         func(s *Server) string
	// check returns the change to apply, or Redis's reason it is wrong.
	check func(s *Server, v string) (apply func(), why string)
}

// encodingKnobs are Redis 7.0's encoding parameters, their defaults and
// bounds (config.c): kept, not used but hll-sparse-max-bytes (cmd_hll.go).
var encodingKnobs = []struct {
	name, alias, def string
	memory           bool  // a size (1kb), else an integer
	lo, hi           int64 // the integer's bounds (a size's are 0 and LONG_MAX)
}{
	{"hash-max-listpack-entries", "hash-max-ziplist-entries", "512", false, 0, math.MaxInt64},
	{"hash-max-listpack-value", "hash-max-ziplist-value", "64", true, 0, 0},
	{"list-max-listpack-size", "list-max-ziplist-size", "-2", false, math.MinInt32, math.MaxInt32},
	{"list-compress-depth", "", "0", false, 0, math.MaxInt32},
	{"set-max-intset-entries", "", "512", false, 0, math.MaxInt64},
	{"zset-max-listpack-entries", "zset-max-ziplist-entries", "128", false, 0, math.MaxInt64},
	{"zset-max-listpack-value", "zset-max-ziplist-value", "64", true, 0, 0},
	{"stream-node-max-bytes", "", "4096", true, 0, 0},
	{"stream-node-max-entries", "", "100", false, 0, math.MaxInt64},
	{"hll-sparse-max-bytes", "", "3000", true, 0, 0},
}

// knobValues holds the encoding knobs' values.
type knobValues struct {
	mu sync.Mutex
	v  map[string]string
}

func (k *knobValues) get(name, def string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v, ok := k.v[name]; ok {
		return v
	}
	return def
}

func (k *knobValues) set(name, v string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.v == nil {
		k.v = map[string]string{}
	}
	k.v[name] = v
}

func settables() []settable {
	ps := []settable{
		{name: "notify-keyspace-events",
			get: func(s *Server) string { return formatNotifyFlags(s.conf.notify.Load()) },
			check: func(s *Server, v string) (func(), string) {
				f, ok := parseNotifyFlags(v)
				if !ok {
					return nil, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
				}
				return func() { s.conf.notify.Store(f) }, ""
			}},
		{name: "busy-reply-threshold", alias: "lua-time-limit",
			get: func(s *Server) string {
				return s.knobs.get("busy-reply-threshold", strconv.FormatInt(s.scr.busyAfter.Load()/int64(time.Millisecond), 10))
			},
			check: intParam(0, 1<<63-1, func(s *Server, n int64) {
				s.scr.busyAfter.Store(busyNanos(n))
				s.knobs.set("busy-reply-threshold", strconv.FormatInt(n, 10)) // CONFIG GET answers what was set
			})},
		{name: "tracking-table-max-keys",
			get: func(s *Server) string { return strconv.FormatInt(s.conf.trackingMaxKeys.Load(), 10) },
			check: intParam(0, 1<<63-1, func(s *Server, n int64) {
				s.conf.trackingMaxKeys.Store(n)
				s.trk.limit(n) // the table shrinks to it now, not at the next read tracked
			})},
		{name: "client-output-buffer-limit", get: outputLimits, check: checkOutputLimits},
		{name: "slowlog-log-slower-than",
			get:   func(s *Server) string { return strconv.FormatInt(s.slow.slowerThan.Load(), 10) },
			check: intParam(-1, math.MaxInt64, (*Server).setSlowlogSlowerThan)},
		{name: "slowlog-max-len",
			get:   func(s *Server) string { return strconv.FormatInt(s.slow.maxLen.Load(), 10) },
			check: intParam(0, math.MaxInt64, func(s *Server, n int64) { s.slow.maxLen.Store(n) })},
	}
	ps = append(ps, latencySettables()...) // latency_config.go
	for _, k := range encodingKnobs {
		ps = append(ps, settable{name: k.name, alias: k.alias,
			get: func(s *Server) string { return s.knobs.get(k.name, k.def) },
			check: func(s *Server, v string) (func(), string) {
				if !k.memory {
					return intParam(k.lo, k.hi, func(s *Server, n int64) { s.knobs.set(k.name, strconv.FormatInt(n, 10)) })(s, v)
				}
				n, ok := parseMemory(v)
				if !ok {
					return nil, "argument must be a memory value"
				}
				if n > math.MaxInt64 { // Redis holds it as a long long: out of its bounds
					return nil, "argument must be between 0 and 9223372036854775807 inclusive"
				}
				out := strconv.FormatUint(n, 10)
				return func() {
					s.knobs.set(k.name, out)
					if k.name == "hll-sparse-max-bytes" { // the one knob used: cmd_hll.go
						s.conf.hllSparseMax.Store(int64(n))
					}
				}, ""
			}})
	}
	return ps
}

// busyMaxNanos bounds busy-reply-threshold as the scripts' timer holds it
// (146 years: a script's start plus it stays within an int64).
const busyMaxNanos = 1 << 62

// busyNanos is a busy-reply-threshold of ms milliseconds (Redis takes up to
// LLONG_MAX) in nanoseconds, at most busyMaxNanos.
func busyNanos(ms int64) int64 {
	if ms >= busyMaxNanos/int64(time.Millisecond) {
		return busyMaxNanos
	}
	return ms * int64(time.Millisecond)
}

// intParam checks an integer within [lo, hi] and applies it.
func intParam(lo, hi int64, apply func(*Server, int64)) func(*Server, string) (func(), string) {
	return func(s *Server, v string) (func(), string) {
		n, ok := resp.ParseInt([]byte(v))
		if !ok {
			return nil, "argument couldn't be parsed into an integer"
		}
		if n < lo || n > hi {
			return nil, "argument must be between " + strconv.FormatInt(lo, 10) + " and " + strconv.FormatInt(hi, 10) + " inclusive"
		}
		return func() { apply(s, n) }, ""
	}
}

// outputLimits is client-output-buffer-limit as CONFIG GET shows it: the
// normal class is server.max_output_buffer (a hard limit), replicas have
// Redis's default (tiercache has none), pubsub the runtime limits.
func outputLimits(s *Server) string {
	return "normal " + strconv.Itoa(s.opts.MaxOutputBytes) + " 0 0 slave 268435456 67108864 60 pubsub " +
		strconv.FormatInt(s.conf.pubsubHard.Load(), 10) + " " + strconv.FormatInt(s.conf.pubsubSoft.Load(), 10) + " " +
		strconv.FormatInt(s.conf.pubsubSoftSeconds.Load(), 10)
}

// checkOutputLimits reads "<class> <hard> <soft> <seconds>..." as Redis
// does (updateClientOutputBufferLimit); only the pubsub class changes
// anything: the others are accepted when they name their current values.
func checkOutputLimits(s *Server, v string) (func(), string) {
	f := strings.Fields(v)
	if len(f)%4 != 0 {
		return nil, "Wrong number of arguments in buffer limit configuration."
	}
	var apply func()
	for i := 0; i < len(f); i += 4 {
		class := strings.ToLower(f[i])
		hard, ok1 := parseMemory(f[i+1])
		soft, ok2 := parseMemory(f[i+2])
		secs, err := strconv.ParseInt(f[i+3], 10, 64) // as strtoll: "+5" too
		if class != "normal" && class != "slave" && class != "replica" && class != "pubsub" {
			return nil, "Invalid client class specified in buffer limit configuration."
		}
		if !ok1 || !ok2 || err != nil || secs < 0 {
			return nil, "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		switch class {
		case "pubsub":
			apply = func() {
				s.conf.pubsubHard.Store(int64(min(hard, math.MaxInt64)))
				s.conf.pubsubSoft.Store(int64(min(soft, math.MaxInt64)))
				s.conf.pubsubSoftSeconds.Store(secs)
			}
		case "normal":
			if hard != uint64(s.opts.MaxOutputBytes) || soft != 0 || secs != 0 {
				return nil, configNormalLimit
			}
		}
	}
	if apply == nil {
		apply = func() {}
	}
	return apply, ""
}

// parseMemory reads a size as Redis's memtoull (util.c) does: digits
// (none is 0), then nothing, b, k, kb, m, mb, g or gb in any case
// (k = 1000, kb = 1024); no sign, nothing past the unit; too many digits
// are 2^64-1, and a unit that overflows that is refused.
func parseMemory(v string) (uint64, bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	var mul uint64
	switch strings.ToLower(v[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1 << 10
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1 << 20
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1 << 30
	default:
		return 0, false
	}
	var n uint64
	if i > 0 {
		n, _ = strconv.ParseUint(v[:i], 10, 64) // digits only: too many saturate, as strtoull's do
	}
	if n > math.MaxUint64/mul {
		return 0, false
	}
	return n * mul, true
}

// runtimeParams are the settable parameters for CONFIG GET.
func (c *conn) runtimeParams() [][2]string {
	var out [][2]string
	for _, p := range settables() {
		v := p.get(c.s)
		out = append(out, [2]string{p.name, v})
		if p.alias != "" {
			out = append(out, [2]string{p.alias, v})
		}
	}
	return out
}

// configSet: CONFIG SET parameter value [parameter value ...]. As
// configSetCommand (config.c) does, every name is checked first (the
// first unknown or repeated one is the error), then every value in order.
func (c *conn) configSet(args [][]byte) {
	switch {
	case len(args) < 4:
		c.wrongArgs("config|set")
		return
	case len(args)%2 != 0: // an odd count past the arity: configSetCommand's syntax error
		c.w.Error(errSyntax)
		return
	}
	params := settables()
	fixed := c.configParams()
	type change struct {
		name, v string
		p       *settable // nil: one of fixed
		fixed   string    // its value, when fixed
	}
	var changes []change
	seen := map[string]bool{}
	for i := 2; i < len(args); i += 2 {
		ch := change{name: strings.ToLower(string(args[i])), v: string(args[i+1])}
		key := ""
		for j := range params {
			if params[j].name == ch.name || params[j].alias != "" && params[j].alias == ch.name {
				ch.p, key = &params[j], params[j].name
			}
		}
		for j := 0; ch.p == nil && j < len(fixed); j++ {
			if fixed[j][0] == ch.name {
				ch.fixed, key = fixed[j][1], ch.name
			}
		}
		if key == "" {
			c.w.Error(errConfigSetUnknown(args[i]))
			return
		}
		// A name given twice is refused; a parameter and its alias are two
		// names, applied in order, as Redis 7.0's alias configs.
		if seen[ch.name] {
			c.w.Error(errConfigSetFailed(string(args[i]), "duplicate parameter"))
			return
		}
		seen[ch.name] = true
		changes = append(changes, ch)
	}
	var applies []func()
	for _, ch := range changes {
		if ch.p == nil {
			if ch.fixed != ch.v {
				c.w.Error(errConfigSetFailed(ch.name, configImmutable))
				return
			}
			continue
		}
		apply, why := ch.p.check(c.s, ch.v)
		if why != "" {
			c.w.Error(errConfigSetFailed(ch.name, why))
			return
		}
		applies = append(applies, apply)
	}
	for _, a := range applies {
		a()
	}
	c.w.OK()
}
