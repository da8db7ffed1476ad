package server

import (
	"net"
	"strconv"
	"strings"
)

// configParams are the parameters CONFIG GET answers, with their values
// as this server runs: what clients and tools read (redis-benchmark reads
// save and appendonly, cache libraries maxmemory and maxmemory-policy).
// maxmemory is the hot budget and the warm arena (the Go heap and the
// cold store come on top, INFO memory); the hot tier evicts by TinyLFU
// admission, closest to Redis's allkeys-lfu.
func (c *conn) configParams() [][2]string {
	o := &c.s.opts
	host, port := "", "0"
	if o.TCPAddr != "" {
		if h, p, err := net.SplitHostPort(o.TCPAddr); err == nil {
			host, port = h, p
		}
	}
	mem := c.s.cache.Memory()
	return [][2]string{
		{"maxmemory", strconv.FormatInt(mem.HotBytes+mem.WarmBytes, 10)},
		{"maxmemory-policy", "allkeys-lfu"},
		{"save", ""},
		{"appendonly", "no"},
		{"databases", "1"},
		{"timeout", "0"},
		{"maxclients", strconv.Itoa(o.MaxConns)},
		{"port", port},
		{"bind", host},
		{"unixsocket", o.UnixSocket},
		{"unixsocketperm", strconv.FormatUint(uint64(o.UnixMode), 8)},
		{"dir", o.DataDir},
		{"proto-max-bulk-len", strconv.Itoa(o.MaxBulkBytes)},
		{"client-query-buffer-limit", strconv.Itoa(o.MaxQueryBytes)},
		{"cluster-enabled", c.s.clusterEnabled()},
	}
}

// cmdConfig: CONFIG GET pattern..., CONFIG SET parameter value...,
// CONFIG RESETSTAT, CONFIG REWRITE, CONFIG HELP, with Redis 7.0's replies.
// CONFIG SET changes what can change while the server runs
// (config_set.go) and refuses any other value, naming the parameter.
func (c *conn) cmdConfig(args [][]byte) {
	switch sub := strings.ToLower(string(args[1])); sub {
	case "get":
		if len(args) < 3 {
			c.wrongArgs("config|get")
			return
		}
		var out [][2]string
		for _, p := range append(c.configParams(), c.runtimeParams()...) {
			for _, pat := range args[2:] {
				if globMatch(strings.ToLower(string(pat)), p[0]) {
					if !strings.ContainsAny(string(pat), "[*?") {
						p[0] = string(pat) // an exact name is answered as typed (configGetCommand)
					}
					out = append(out, p)
					break
				}
			}
		}
		c.w.Map(len(out))
		for _, p := range out {
			c.w.BulkString(p[0])
			c.w.BulkString(p[1])
		}
	case "set":
		c.configSet(args) // config_set.go
	case "resetstat", "rewrite":
		if len(args) != 2 {
			c.wrongArgs("config|" + sub)
			return
		}
		if sub == "rewrite" {
			c.w.Error(errConfigRewrite)
			return
		}
		c.s.resetStats() // resetstat.go
		c.w.Simple("OK")
	case "help":
		help := []string{"CONFIG <subcommand> [<arg> ...]. Subcommands are:", "GET <pattern>", "SET <directive> <value>",
			"RESETSTAT (INFO's counters restart; /metrics' counters do not)", "REWRITE (refused)", "HELP"}
		c.w.Array(len(help))
		for _, h := range help {
			c.w.Simple(h)
		}
	default:
		c.unknownSubcommand("config", args[1])
	}
}
