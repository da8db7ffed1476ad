# scripts/test.d/sessions/cluster.py HOST:PORT [one-node] — redis-py's
# RedisCluster (Debian's python3-redis) seeded with HOST:PORT (password
# "pw"): MGET of one slot, MGET and MSET across slots (refused by the
# client), commands across slots sent to one node (refused by the server:
# CROSSSLOT), a pipeline over every slot, and LMCache's redis-cluster://
# connector's calls through redis.asyncio's RedisCluster (SET kv_bytes,
# SET metadata, EXISTS, GET, DELETE). Prints one line per step: 30-clients
# runs it against a real Redis Cluster and against tiercache in cluster
# mode and compares the two. With "one-node" it also checks that the
# client sees one primary owning every slot at HOST:PORT.
import asyncio
import sys

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster

host, port = sys.argv[1].rsplit(":", 1)
port = int(port)
rc = RedisCluster(startup_nodes=[ClusterNode(host, port)], password="pw")


def step(name, f):
    try:
        print(name, repr(f()))
    except (redis.RedisError, redis.exceptions.RedisClusterException) as e:
        print(name, "raised", type(e).__name__, str(e))


# Keys: a 15495, b 3300, x 16287, y 12222; {u} one slot.
def flushall():
    r = rc.flushall(target_nodes=RedisCluster.PRIMARIES)  # a reply per node, or one for one node
    return all(r.values()) if isinstance(r, dict) else r


step("flushall on every primary", flushall)
step("mset tagged", lambda: rc.mset({"{u}a": "1", "{u}b": "2"}))
step("mget tagged", lambda: rc.mget("{u}a", "{u}b", "{u}none"))
step("mget across slots", lambda: rc.mget("a", "b"))
step("mset across slots", lambda: rc.mset({"x": "1", "y": "2"}))
step("mset_nonatomic", lambda: rc.mset_nonatomic({"a": "1", "b": "2", "x": "3", "y": "4"}))
step("mget_nonatomic", lambda: rc.mget_nonatomic("a", "b", "x", "y", "none"))
step("delete across slots", lambda: rc.delete("a", "b", "x"))
node = rc.get_node_from_key("x")
for cmd in (("MGET", "x", "b"), ("DEL", "x", "b"), ("EXISTS", "x", "a"), ("RENAME", "x", "y")):
    step("%s across slots to x's node" % cmd[0], lambda: rc.execute_command(*cmd, target_nodes=node))
p = rc.pipeline()
for i in range(200):
    p.set("k%d" % i, i)
for i in range(200):
    p.get("k%d" % i)
res = p.execute()
print("pipeline of 400:", sum(1 for i, v in enumerate(res[200:]) if v != str(i).encode()), "wrong")
step("keyslot", lambda: rc.keyslot("{user1}:profile"))
step("cluster keyslot", lambda: rc.cluster_keyslot("{user1}:profile"))


async def lmcache():
    # What LMCache's RedisClusterConnector sends: put, exists, get, and
    # delete of a metadata key whose payload is missing. It seeds
    # startup_nodes=[ClusterNode(h, p)]; redis-py 4.3.4's asyncio
    # ClusterNode made so drops the password (redis-py fixed it later), so
    # the seed is given as host and port here, which is the same
    # discovery.
    c = AsyncRedisCluster(host=host, port=port, password="pw", max_connections=150, decode_responses=False)
    key = "vllm@model@1@0@abcdef"
    await c.set(key + "kv_bytes", b"\x00\x01" * 4096)
    await c.set(key + "metadata", b"meta")
    out = [bool(await c.exists(key + "metadata")), len(await c.get(key + "kv_bytes")), await c.get(key + "metadata")]
    out.append(await c.delete(key + "metadata"))
    out.append(bool(await c.exists(key + "metadata")))
    await c.close()
    return out


step("lmcache redis-cluster connector", lambda: asyncio.run(lmcache()))

if len(sys.argv) > 2 and sys.argv[2] == "one-node":
    primaries = rc.get_primaries()
    slots = rc.cluster_slots(target_nodes=RedisCluster.RANDOM)
    if [(n.host, n.port) for n in primaries] != [(host, port)] or list(slots) != [(0, 16383)]:
        print("topology: primaries %r, slots %r" % ([n.name for n in primaries], slots), file=sys.stderr)
        sys.exit(1)
    if rc.info(target_nodes=RedisCluster.RANDOM).get("cluster_enabled") != 1:
        print("INFO cluster_enabled is not 1", file=sys.stderr)
        sys.exit(1)
rc.close()
