# scripts/test.d/sessions/scripting.py SOCKET — issue 33 through redis-py's
# own APIs: Lock (4 processes contending, one computation done once and
# the others served its result), register_script, and pubsub() with
# keyspace notifications; 30-clients runs it against redis-server and
# tiercache and compares the outputs.
import multiprocessing
import sys
import time

import redis

SOCK = sys.argv[1]


def worker(i, q):
    r = redis.Redis(unix_socket_path=SOCK)
    # Coalesce one embedding computation across workers: whoever takes the
    # lock computes and stores it; the others wait for the lock, then find
    # the result and do not compute.
    with r.lock("lock:embed:42", timeout=10, blocking_timeout=20, sleep=0.01):
        if r.get("embed:42") is None:
            r.incr("computations")
            time.sleep(0.2)  # the computation
            r.set("embed:42", "vector")
            q.put("computed")
        else:
            q.put("served")


def main():
    r = redis.Redis(unix_socket_path=SOCK)
    r.flushall()
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=worker, args=(i, q)) for i in range(4)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(60)
    outcomes = sorted(q.get(timeout=5) for _ in ps)
    print("lock outcomes", outcomes, "computations", r.get("computations"))
    lock = r.lock("lock:x", timeout=5)
    print("acquire", lock.acquire(blocking=False), "again", r.lock("lock:x").acquire(blocking=False))
    print("extend", lock.extend(5), "owned", lock.owned())
    print("release", lock.release(), "locked", lock.locked())
    try:
        lock.release()
    except redis.exceptions.LockError as e:
        print("release twice:", type(e).__name__)

    capped = r.register_script("""
local n = redis.call('incr', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('set', KEYS[1], ARGV[1])
  return tonumber(ARGV[1])
end
return n""")
    print("capped", [capped(keys=["cnt"], args=[3]) for _ in range(5)])
    r.script_flush()
    print("after SCRIPT FLUSH", capped(keys=["cnt"], args=[3]))
    getset = r.register_script("local v = redis.call('get', KEYS[1]); if not v then redis.call('set', KEYS[1], ARGV[1]); return ARGV[1] end; return v")
    print("get-or-set", getset(keys=["gs"], args=["a"]), getset(keys=["gs"], args=["b"]))
    try:
        r.eval("return redis.call('nosuch')", 0)
    except redis.ResponseError as e:
        print("script error:", e)

    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.subscribe("jobs")
    p.psubscribe("__keyspace@0__:doc:*")
    for _ in range(2):
        print("sub", p.get_message(timeout=2))
    r.publish("jobs", "embed 42")
    r.set("doc:1", "x")
    r.expire("doc:1", 100)
    r.delete("doc:1")
    for _ in range(4):
        m = p.get_message(timeout=2)
        print("msg", m and (m["type"], m["pattern"], m["channel"], m["data"]))
    print("numsub", r.pubsub_numsub("jobs"), "numpat", r.pubsub_numpat())
    p.close()
    r.config_set("notify-keyspace-events", "")


if __name__ == "__main__":
    main()
