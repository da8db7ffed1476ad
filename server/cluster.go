package server

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/tiercache/tiercache/remote"
)

// The emulated cluster (Options.Cluster): the server answers as the one
// node of a Redis Cluster that owns every slot, as Dragonfly's emulated
// cluster mode does, so that cluster clients (go-redis's ClusterClient,
// rueidis, redis-py's RedisCluster, ioredis's Cluster) connect unchanged.
// The replies are Redis 7.0's, byte for byte where a client parses them
// (CL1); there is no cluster bus, no other node, no failover.

// clusterNode is this server as that node.
type clusterNode struct {
	id   string // 40 hex digits (clusterNodeID)
	ip   string // announced; "" = the local address of each client's connection
	port int
}

// clusterEpoch is the node's config epoch and the cluster's current epoch:
// 0, as a lone Redis node's that was given every slot with ADDSLOTS.
const clusterEpoch = "0"

// startCluster makes s.node from the listeners Start serves: the first TCP
// one gives the port and, unless it listens on every address, the IP;
// Options.ClusterAnnounce overrides either.
func (s *Server) startCluster(ls []net.Listener) error {
	if !s.opts.Cluster {
		return nil
	}
	var tcp *net.TCPAddr
	for _, l := range ls {
		if a, ok := l.Addr().(*net.TCPAddr); ok {
			tcp = a
			break
		}
	}
	if tcp == nil {
		return fmt.Errorf("%w: cluster mode needs a TCP listener, and none is served", ErrInvalidOptions)
	}
	ip, port, err := parseAnnounce(s.opts.ClusterAnnounce)
	if err != nil { // Validate took it
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	if port == 0 {
		port = tcp.Port
	}
	if ip == "" && len(tcp.IP) > 0 && !tcp.IP.IsUnspecified() {
		ip = tcp.IP.String()
	}
	host, _ := os.Hostname()
	s.node = clusterNode{id: clusterNodeID(host, tcp.String(), s.opts.ClusterAnnounce), ip: ip, port: port}
	return nil
}

// clusterNodeID is the node's id: the SHA-1 of the host's name, the TCP
// listener's address and the announced address, in hex. Redis draws a
// node's id at random and keeps it in nodes.conf; this node has no
// cluster state to keep, and may have no data directory, while what
// names it to a client is its address: so the id is the same across
// restarts with the same address, and differs between hosts and between
// sidecars on different ports of one host (CL1).
func clusterNodeID(host, listen, announce string) string {
	sum := sha1.Sum([]byte("tiercache emulated cluster node\x00" + host + "\x00" + listen + "\x00" + announce))
	return hex.EncodeToString(sum[:])
}

// parseAnnounce reads Options.ClusterAnnounce: "ip", "ip:port",
// ":port" or "" (0 for a port not given).
func parseAnnounce(s string) (ip string, port int, err error) {
	if s == "" {
		return "", 0, nil
	}
	host, p, err := net.SplitHostPort(s)
	if err != nil { // no port: an IP alone (an IPv6 one has colons of its own)
		host, p = s, ""
	}
	if host != "" {
		a := net.ParseIP(host)
		if a == nil {
			return "", 0, fmt.Errorf("cluster announce address %q: %q is not an IP address (clients are told an IP, as by Redis's cluster-announce-ip)", s, host)
		}
		ip = a.String()
	}
	if p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return "", 0, fmt.Errorf("cluster announce address %q: port %q is not 1-65535", s, p)
		}
	}
	return ip, port, nil
}

// validateCluster is Validate's part for the cluster options.
func (o *Options) validateCluster() []error {
	var errs []error
	if _, _, err := parseAnnounce(o.ClusterAnnounce); err != nil {
		errs = append(errs, err)
	}
	if o.ClusterAnnounce != "" && !o.Cluster {
		errs = append(errs, fmt.Errorf("cluster announce address %q is set but cluster mode is off", o.ClusterAnnounce))
	}
	if o.Cluster && !o.servesTCP() {
		errs = append(errs, errors.New("cluster mode needs a TCP listener: cluster clients connect over TCP, to the address the node announces"))
	}
	return errs
}

// servesTCP: Start will serve a TCP listener.
func (o *Options) servesTCP() bool {
	if len(o.Listeners) == 0 {
		return o.TCPAddr != ""
	}
	for _, l := range o.Listeners {
		if l.Listener != nil && strings.HasPrefix(l.Addr().Network(), "tcp") {
			return true
		}
	}
	return false
}

// clusterAddr is the address the node announces to c: the configured or
// listened-on IP, else the local address c reached (a client on the Unix
// socket, which reached none, is told the loopback address). A script's
// connection has no socket: its client's address is announced.
func (c *conn) clusterAddr() (ip string, port int) {
	n := &c.s.node
	if n.ip != "" {
		return n.ip, n.port
	}
	nc := c.nc
	if c.scriptOf != nil {
		nc = c.scriptOf.nc
	}
	if a, ok := nc.LocalAddr().(*net.TCPAddr); ok && len(a.IP) > 0 && !a.IP.IsUnspecified() {
		return a.IP.String(), n.port
	}
	return "127.0.0.1", n.port
}

// redisMode is INFO's redis_mode and HELLO's mode.
func (s *Server) redisMode() string {
	if s.opts.Cluster {
		return "cluster"
	}
	return "standalone"
}

// clusterEnabled is CONFIG GET cluster-enabled.
func (s *Server) clusterEnabled() string {
	if s.opts.Cluster {
		return "yes"
	}
	return "no"
}

// writeClusterInfo writes INFO's cluster section: Redis's
// cluster_enabled, then tiercache's own fields in cluster mode.
func (s *Server) writeClusterInfo(b *strings.Builder) {
	b.WriteString("# Cluster\r\n")
	if !s.opts.Cluster {
		b.WriteString("cluster_enabled:0\r\n")
		return
	}
	b.WriteString("cluster_enabled:1\r\ncluster_mode:emulated\r\ncluster_node_id:" + s.node.id +
		"\r\ncluster_announce_ip:" + s.node.ip + "\r\ncluster_announce_port:" + strconv.Itoa(s.node.port) + "\r\n")
}

// clusterSubs are the handlers of CLUSTER's subcommands, which
// redis-server 7.0 has (their arities: subcommandSpecs); a nil handler is
// a subcommand that changes a cluster's topology or configuration, which
// a cluster of one fixed node refuses.
var clusterSubs = map[string]func(c *conn, args [][]byte){
	"info":                  (*conn).clusterInfo,
	"myid":                  func(c *conn, _ [][]byte) { c.w.BulkString(c.s.node.id) },
	"slots":                 (*conn).clusterSlots,
	"shards":                (*conn).clusterShards,
	"nodes":                 (*conn).clusterNodes,
	"links":                 func(c *conn, _ [][]byte) { c.w.Array(0) }, // no other node, no link
	"keyslot":               func(c *conn, a [][]byte) { c.w.Int(int64(remote.KeySlot(a[2]))) },
	"countkeysinslot":       (*conn).clusterCountKeys,
	"getkeysinslot":         (*conn).clusterGetKeys,
	"replicas":              func(c *conn, a [][]byte) { c.ifMyID(a[2], func() { c.w.Array(0) }) },
	"slaves":                func(c *conn, a [][]byte) { c.ifMyID(a[2], func() { c.w.Array(0) }) },
	"count-failure-reports": func(c *conn, a [][]byte) { c.ifMyID(a[2], func() { c.w.Int(0) }) },
	"help":                  (*conn).clusterHelp,
	"addslots":              nil,
	"addslotsrange":         nil,
	"bumpepoch":             nil,
	"delslots":              nil,
	"delslotsrange":         nil,
	"failover":              nil,
	"flushslots":            nil,
	"forget":                nil,
	"meet":                  nil,
	"replicate":             nil,
	"reset":                 nil,
	"saveconfig":            nil,
	"set-config-epoch":      nil,
	"setslot":               nil,
}

// cmdCluster: CLUSTER subcommand [arg...]. As in redis-server, an unknown
// subcommand and a wrong argument count are answered before cluster
// support is looked at: before CLUSTER runs (dispatch, S86).
func (c *conn) cmdCluster(args [][]byte) {
	run, ok := clusterSubs[strings.ToLower(string(args[1]))]
	switch {
	case !ok:
		c.unknownSubcommand("cluster", args[1])
	case !c.s.opts.Cluster:
		c.w.Error(errClusterDisabled)
	case run == nil:
		c.w.Error(errClusterFixed(args[1]))
	default:
		run(c, args)
	}
}

// cmdClusterOK answers READONLY, READWRITE and ASKING: OK in cluster mode
// (every slot is this node's, and it serves reads and writes alike).
func (c *conn) cmdClusterOK(args [][]byte) {
	if !c.s.opts.Cluster {
		c.w.Error(errClusterDisabled)
		return
	}
	c.w.OK()
}

// clusterCommands are the table's entries of the cluster protocol
// (newCommandTable adds them).
func clusterCommands() []*command {
	return []*command{
		{name: "cluster", arity: -2, run: (*conn).cmdCluster},
		{name: "readonly", arity: 1, flags: []string{"loading", "stale", "fast"}, run: (*conn).cmdClusterOK},
		{name: "readwrite", arity: 1, flags: []string{"loading", "stale", "fast"}, run: (*conn).cmdClusterOK},
		{name: "asking", arity: 1, flags: []string{"fast"}, run: (*conn).cmdClusterOK},
	}
}

// ifMyID runs f when id is this node's, else answers Redis's unknown node.
func (c *conn) ifMyID(id []byte, f func()) {
	if string(id) != c.s.node.id {
		c.w.Error(errUnknownNode(id))
		return
	}
	f()
}
