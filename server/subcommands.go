package server

import (
	"slices"
	"strings"
)

// subSpec is one subcommand of a container command, as Redis 7.0
// declares it: its arity (the container's name and the subcommand's
// included), flags and key positions.
type subSpec struct {
	name              string
	arity             int
	flags             []string
	first, last, step int
}

// Flag lists the subcommand table shares.
var (
	subAdmin   = []string{"admin", "noscript", "loading", "stale"}
	subConn    = []string{"noscript", "loading", "stale"}
	subInfo    = []string{"loading", "stale"} // HELP's, and COMMAND's subcommands'
	subPubSub  = []string{"pubsub", "loading", "stale"}
	subSlowlog = []string{"admin", "loading", "stale"}
	subTopo    = []string{"admin", "stale", "no_async_loading"} // CLUSTER's topology changes
	subRemote  = []string{"admin", "stale"}
	subStale   = []string{"stale"}
	subRead    = []string{"readonly"}
	subNone    = []string{}
)

// subcommandSpecs are the subcommands of tiercache's container commands
// that it implements (or refuses by name: FUNCTION's, CLUSTER's topology
// changes), with the arity, flags and key positions of Redis 7.0's
// src/commands/<container>-<subcommand>.json (e.g. config-get.json:
// "arity": -3, ADMIN NOSCRIPT LOADING STALE), which redis-server 7.0's
// COMMAND INFO answers too (TestSubcommandInfoMatchesRedis). CLIENT
// SETINFO is Redis 7.2's (client-setinfo.json). A subcommand not listed
// is unknown (S86): MEMORY DOCTOR and STATS,
// COMMAND HELP and GETKEYSANDFLAGS, SCRIPT DEBUG.
var subcommandSpecs = map[string][]subSpec{
	"client": { // client-*.json
		{"caching", 3, subConn, 0, 0, 0},
		{"getname", 2, subConn, 0, 0, 0},
		{"getredir", 2, subConn, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"id", 2, subConn, 0, 0, 0},
		{"info", 2, subConn, 0, 0, 0},
		{"kill", -3, subAdmin, 0, 0, 0},
		{"list", -2, subAdmin, 0, 0, 0},
		{"no-evict", 3, subAdmin, 0, 0, 0},
		{"pause", -3, subAdmin, 0, 0, 0}, // client-pause.json: ADMIN NOSCRIPT LOADING STALE (SENTINEL)
		{"reply", 3, subConn, 0, 0, 0},
		{"setinfo", 4, subConn, 0, 0, 0}, // Redis 7.2
		{"setname", 3, subConn, 0, 0, 0},
		{"tracking", -3, subConn, 0, 0, 0},
		{"trackinginfo", 2, subConn, 0, 0, 0},
		{"unblock", -3, subAdmin, 0, 0, 0},
		{"unpause", 2, subAdmin, 0, 0, 0}, // client-unpause.json, as PAUSE's
	},
	"config": { // config-*.json
		{"get", -3, subAdmin, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"resetstat", 2, subAdmin, 0, 0, 0},
		{"rewrite", 2, subAdmin, 0, 0, 0},
		{"set", -4, subAdmin, 0, 0, 0},
	},
	"command": { // command-*.json
		{"count", 2, subInfo, 0, 0, 0},
		{"docs", -2, subInfo, 0, 0, 0},
		{"getkeys", -4, subInfo, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"info", -2, subInfo, 0, 0, 0},
		{"list", -2, subInfo, 0, 0, 0},
	},
	"object": { // object-*.json: the key is the third argument
		{"encoding", 3, subRead, 2, 2, 1},
		{"freq", 3, subRead, 2, 2, 1},
		{"help", 2, subInfo, 0, 0, 0},
		{"idletime", 3, subRead, 2, 2, 1},
		{"refcount", 3, subRead, 2, 2, 1},
	},
	"memory": { // memory-*.json
		{"help", 2, subInfo, 0, 0, 0},
		{"malloc-stats", 2, subNone, 0, 0, 0},
		{"purge", 2, subNone, 0, 0, 0},
		{"usage", -3, subRead, 2, 2, 1},
	},
	"latency": { // latency-*.json
		{"doctor", 2, subAdmin, 0, 0, 0},
		{"graph", 3, subAdmin, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"histogram", -2, subAdmin, 0, 0, 0},
		{"history", 3, subAdmin, 0, 0, 0},
		{"latest", 2, subAdmin, 0, 0, 0},
		{"reset", -2, subAdmin, 0, 0, 0},
	},
	"slowlog": { // slowlog-*.json
		{"get", -2, subSlowlog, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"len", 2, subSlowlog, 0, 0, 0},
		{"reset", 2, subSlowlog, 0, 0, 0},
	},
	"script": { // script-*.json
		{"exists", -3, []string{"noscript"}, 0, 0, 0},
		{"flush", -2, []string{"noscript"}, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"kill", 2, []string{"noscript", "allow_busy"}, 0, 0, 0},
		{"load", 3, []string{"noscript", "stale"}, 0, 0, 0},
	},
	"function": { // function-*.json; all but FLUSH and LIST answer errNoFunctions
		{"delete", 3, []string{"write", "noscript"}, 0, 0, 0},
		{"dump", 2, []string{"noscript"}, 0, 0, 0},
		{"flush", -2, []string{"write", "noscript"}, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"kill", 2, []string{"noscript", "allow_busy"}, 0, 0, 0},
		{"list", -2, []string{"noscript"}, 0, 0, 0},
		{"load", -3, []string{"write", "denyoom", "noscript"}, 0, 0, 0},
		{"restore", -3, []string{"write", "denyoom", "noscript"}, 0, 0, 0},
		{"stats", 2, []string{"noscript", "allow_busy"}, 0, 0, 0},
	},
	"pubsub": { // pubsub-*.json
		{"channels", -2, subPubSub, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"numpat", 2, subPubSub, 0, 0, 0},
		{"numsub", -2, subPubSub, 0, 0, 0},
		{"shardchannels", -2, subPubSub, 0, 0, 0},
		{"shardnumsub", -2, subPubSub, 0, 0, 0},
	},
	"cluster": { // cluster-*.json; the topology changes answer errClusterFixed (clusterSubs)
		{"addslots", -3, subTopo, 0, 0, 0},
		{"addslotsrange", -4, subTopo, 0, 0, 0},
		{"bumpepoch", 2, subTopo, 0, 0, 0},
		{"count-failure-reports", 3, subRemote, 0, 0, 0},
		{"countkeysinslot", 3, subStale, 0, 0, 0},
		{"delslots", -3, subTopo, 0, 0, 0},
		{"delslotsrange", -4, subTopo, 0, 0, 0},
		{"failover", -2, subTopo, 0, 0, 0},
		{"flushslots", 2, subTopo, 0, 0, 0},
		{"forget", 3, subTopo, 0, 0, 0},
		{"getkeysinslot", 4, subStale, 0, 0, 0},
		{"help", 2, subInfo, 0, 0, 0},
		{"info", 2, subStale, 0, 0, 0},
		{"keyslot", 3, subStale, 0, 0, 0},
		{"links", 2, subStale, 0, 0, 0},
		{"meet", -4, subTopo, 0, 0, 0},
		{"myid", 2, subStale, 0, 0, 0},
		{"nodes", 2, subStale, 0, 0, 0},
		{"replicas", 3, subRemote, 0, 0, 0},
		{"replicate", 3, subTopo, 0, 0, 0},
		{"reset", -2, []string{"admin", "noscript", "stale"}, 0, 0, 0},
		{"saveconfig", 2, subTopo, 0, 0, 0},
		{"set-config-epoch", 3, subTopo, 0, 0, 0},
		{"setslot", -4, subTopo, 0, 0, 0},
		{"shards", 2, subStale, 0, 0, 0},
		{"slaves", 3, subRemote, 0, 0, 0},
		{"slots", 2, subStale, 0, 0, 0},
	},
}

// containerInfoFlags are the flags redis-server 7.0's COMMAND INFO gives
// a container itself (command.json's; the other containers declare
// none): the ones tiercache's table gives it decide how it runs, as its
// subcommands' do in Redis.
var containerInfoFlags = map[string][]string{"command": {"loading", "stale"}}

// addSubcommands gives each container of t its subcommands (cmd.subs),
// named "container|sub" as Redis names them.
func addSubcommands(t map[string]*command) {
	for name, specs := range subcommandSpecs {
		parent := t[name]
		if parent == nil {
			continue
		}
		parent.subs = make(map[string]*command, len(specs))
		for _, sp := range specs {
			sub := &command{name: name + "|" + sp.name, arity: sp.arity, flags: sp.flags, first: sp.first, last: sp.last, step: sp.step}
			sub.noscript = slices.Contains(sp.flags, "noscript")
			sub.write = slices.Contains(sp.flags, "write")
			sub.admin = slices.Contains(sp.flags, "admin") // hidden from monitors (monitorHides)
			sub.allowBusy = slices.Contains(sp.flags, "allow_busy") || parent.allowBusy
			parent.subs[sp.name] = sub
		}
	}
}

// subcommand finds the subcommand named by args[1] (any case) of a
// container: cmd itself when cmd has no subcommands or args name none
// (Redis's lookupCommandLogic: the container alone is checked as a
// command), nil when args[1] is no subcommand of it.
func (cmd *command) subcommand(args [][]byte) *command {
	if cmd.subs == nil || len(args) < 2 {
		return cmd
	}
	var buf [24]byte
	return cmd.subs[string(lowerName(&buf, args[1]))] // no allocation, as lookup
}

// lowerName is name in lower case, written in buf; nil (no command's
// name) when it does not fit.
func lowerName(buf *[24]byte, name []byte) []byte {
	if len(name) > len(buf) {
		return nil
	}
	for i, b := range name {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		buf[i] = b
	}
	return buf[:len(name)]
}

// arityOK reports whether n arguments (the name included) fit cmd's
// arity: n exactly, or at least -arity.
func (cmd *command) arityOK(n int) bool {
	return cmd.arity > 0 && n == cmd.arity || cmd.arity < 0 && n >= -cmd.arity
}

// statsOf are the INFO commandstats counters args count in: their
// subcommand's, as Redis 7.0 counts CLIENT LIST as client|list, else
// cmd's.
func (cmd *command) statsOf(args [][]byte) *cmdStats {
	if sub := cmd.subcommand(args); sub != nil {
		return &sub.stats
	}
	return &cmd.stats
}

// byFullName finds a command or subcommand by the name COMMAND INFO is
// given, "get" or "config|get", any case.
func (s *Server) byFullName(name string) *command {
	name = strings.ToLower(name)
	parent, sub, ok := strings.Cut(name, "|")
	cmd := s.cmds[parent]
	if !ok || cmd == nil {
		return cmd
	}
	return cmd.subs[sub]
}

// sortedSubcommands are cmd's subcommands by name.
func (cmd *command) sortedSubcommands() []*command {
	subs := make([]*command, 0, len(cmd.subs))
	for _, sub := range cmd.subs {
		subs = append(subs, sub)
	}
	slices.SortFunc(subs, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	return subs
}
