package server

import (
	"math"
	"strconv"

	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/tier"
)

// The CLUSTER replies of the emulated cluster, in redis-server 7.0's
// shapes (cluster.c: clusterGenNodeDescription, addNodeReplyForClusterShard,
// clusterReplyMultiBulkSlots, clusterGenClusterInfoString): those of a
// lone master given every slot, but that the node's address is the one
// clients reach it by (a lone Redis node announces none until another
// node meets it).

// lastSlot is the highest hash slot.
const lastSlot = remote.Slots - 1

// clusterInfo: CLUSTER INFO, a lone node's lines.
func (c *conn) clusterInfo(_ [][]byte) {
	c.w.Verbatim("txt", "cluster_state:ok\r\n"+
		"cluster_slots_assigned:16384\r\n"+
		"cluster_slots_ok:16384\r\n"+
		"cluster_slots_pfail:0\r\n"+
		"cluster_slots_fail:0\r\n"+
		"cluster_known_nodes:1\r\n"+
		"cluster_size:1\r\n"+
		"cluster_current_epoch:"+clusterEpoch+"\r\n"+
		"cluster_my_epoch:"+clusterEpoch+"\r\n"+
		"cluster_stats_messages_sent:0\r\n"+
		"cluster_stats_messages_received:0\r\n"+
		"total_cluster_links_buffer_limit_exceeded:0\r\n")
}

// clusterSlots: CLUSTER SLOTS, one range of every slot served by this
// node: [0, 16383, [ip, port, id, {}]] (the map of other endpoints is
// empty: the node announces an IP and no hostname).
func (c *conn) clusterSlots(_ [][]byte) {
	ip, port := c.clusterAddr()
	c.w.Array(1)
	c.w.Array(3)
	c.w.Int(0)
	c.w.Int(lastSlot)
	c.w.Array(4)
	c.w.BulkString(ip)
	c.w.Int(int64(port))
	c.w.BulkString(c.s.node.id)
	c.w.Map(0)
}

// clusterShards: CLUSTER SHARDS, one shard of every slot with this node
// as its master.
func (c *conn) clusterShards(_ [][]byte) {
	ip, port := c.clusterAddr()
	c.w.Array(1)
	c.w.Map(2)
	c.w.BulkString("slots")
	c.w.Array(2)
	c.w.Int(0)
	c.w.Int(lastSlot)
	c.w.BulkString("nodes")
	c.w.Array(1)
	c.w.Map(7)
	c.w.BulkString("id")
	c.w.BulkString(c.s.node.id)
	c.w.BulkString("port")
	c.w.Int(int64(port))
	c.w.BulkString("ip")
	c.w.BulkString(ip)
	c.w.BulkString("endpoint")
	c.w.BulkString(ip)
	c.w.BulkString("role")
	c.w.BulkString("master")
	c.w.BulkString("replication-offset")
	c.w.Int(0)
	c.w.BulkString("health")
	c.w.BulkString("online")
}

// clusterNodes: CLUSTER NODES, this node's line. The cluster bus port
// after '@' is 0: there is no cluster bus, and no node can meet this one.
func (c *conn) clusterNodes(_ [][]byte) {
	ip, port := c.clusterAddr()
	c.w.Verbatim("txt", c.s.node.id+" "+ip+":"+strconv.Itoa(port)+"@0 myself,master - 0 0 "+clusterEpoch+
		" connected 0-"+strconv.Itoa(lastSlot)+"\n")
}

// slotArg reads a slot number as Redis reads it: an integer (else its
// integer error), then within 0..16383 (else invalid, the caller's text).
func (c *conn) slotArg(b []byte, invalid string) (uint16, bool) {
	n, ok := c.intArg(b)
	if !ok {
		return 0, false
	}
	if n < 0 || n > lastSlot {
		c.w.Error(invalid)
		return 0, false
	}
	return uint16(n), true
}

// clusterCountKeys: CLUSTER COUNTKEYSINSLOT slot. Redis keeps its keys by
// slot; here every key is hashed, O(keys), like KEYS.
func (c *conn) clusterCountKeys(args [][]byte) {
	slot, ok := c.slotArg(args[2], errInvalidSlot)
	if !ok || !c.cacheOpen() {
		return
	}
	n := 0
	c.scanSlot(slot, func([]byte) bool { n++; return true })
	c.w.Int(int64(n))
}

// clusterGetKeys: CLUSTER GETKEYSINSLOT slot count, at most count of the
// slot's keys. O(keys) until count are found, like KEYS.
func (c *conn) clusterGetKeys(args [][]byte) {
	n, ok := c.intArg(args[2])
	if !ok {
		return
	}
	count, ok := c.intArg(args[3])
	if !ok {
		return
	}
	if count < 0 || n < 0 || n > lastSlot {
		c.w.Error(errInvalidSlotOrCount)
		return
	}
	if !c.cacheOpen() {
		return
	}
	var keys [][]byte
	if count > 0 {
		c.scanSlot(uint16(n), func(k []byte) bool { keys = append(keys, k); return int64(len(keys)) < count })
	}
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.Bulk(k)
	}
}

// cacheOpen answers -LOADING and reports false while the server loads:
// CLUSTER is served while loading (the topology), but not the
// subcommands that read keys.
func (c *conn) cacheOpen() bool {
	if c.ready || c.loaded() {
		return true
	}
	c.w.Error(errLoading)
	return false
}

// scanSlot calls f with each key of slot (a copy, f may keep it) until
// f returns false: a walk of every key, as KEYS.
func (c *conn) scanSlot(slot uint16, f func(key []byte) bool) {
	more := true
	match := func(k string, _ tier.Kind) bool {
		if more && remote.KeySlot([]byte(k)) == slot {
			more = f([]byte(k))
		}
		return false
	}
	for cursor := uint64(0); more; {
		next, _ := c.s.cache.Scan(cursor, math.MaxInt, match)
		if next == 0 {
			break
		}
		cursor = next
	}
}

// clusterHelp: CLUSTER HELP, the subcommands this node answers, in
// redis-server's shape (an array of status lines).
func (c *conn) clusterHelp(_ [][]byte) {
	lines := []string{
		"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"COUNTKEYSINSLOT <slot>",
		"    Return the number of keys in <slot>.",
		"GETKEYSINSLOT <slot> <count>",
		"    Return key names stored by this node in a slot.",
		"INFO",
		"    Return information about the cluster.",
		"KEYSLOT <key>",
		"    Return the hash slot for <key>.",
		"LINKS",
		"    Return information about all network links between this node and its peers.",
		"MYID",
		"    Return the node id.",
		"NODES",
		"    Return cluster configuration seen by node. Output format:",
		"    <id> <ip:port@bus-port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
		"REPLICAS <node-id>",
		"    Return <node-id> replicas.",
		"SHARDS",
		"    Return information about slot range mappings and the nodes associated with them.",
		"SLOTS",
		"    Return information about slots range mappings. Each range is made of:",
		"    start, end, master and replicas IP addresses, ports and ids",
		"HELP",
		"    Prints this help.",
		"This node is tiercache's emulated cluster (server.cluster): one node that owns every slot.",
		"The subcommands that change a cluster (MEET, ADDSLOTS, FAILOVER...) are refused.",
	}
	c.w.Array(len(lines))
	for _, l := range lines {
		c.w.Simple(l)
	}
}
