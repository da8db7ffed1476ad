# scripts/test.d/sessions/watch.py SOCKET — which writes by a second
# connection between WATCH and EXEC abort the transaction; 30-clients runs
# it against redis-server and tiercache and compares the outputs.
import sys
import time

import redis

r = redis.Redis(unix_socket_path=sys.argv[1])
o = redis.Redis(unix_socket_path=sys.argv[1])


def tx(setup, between):
    r.flushall()
    setup()
    p = r.pipeline()
    p.watch("k")
    between()
    p.multi()
    p.set("x", "1")
    try:
        p.execute()
        return "ran"
    except redis.WatchError:
        return "aborted"


cases = {
    "expired": (lambda: r.set("k", "1", px=100), lambda: time.sleep(0.3)),
    "set": (lambda: r.set("k", "1"), lambda: o.set("k", "2")),
    "setnx that fails": (lambda: r.set("k", "1"), lambda: o.setnx("k", "2")),
    "del of the absent key": (lambda: None, lambda: o.delete("k")),
    "expire of the absent key": (lambda: None, lambda: o.expire("k", 10)),
    "expire gt that fails": (lambda: r.set("k", "1", ex=100), lambda: o.expire("k", 10, gt=True)),
    "set then del of the absent key": (lambda: None, lambda: (o.set("k", 1), o.delete("k"))),
    "flushall, the key absent": (lambda: None, lambda: o.flushall()),
    "flushall, the key present": (lambda: r.set("k", 1), lambda: o.flushall()),
    "rename onto it": (lambda: r.set("j", 1), lambda: o.rename("j", "k")),
    "renamenx onto it that fails": (lambda: (r.set("j", 1), r.set("k", 1)), lambda: o.renamenx("j", "k")),
    "copy replace onto it": (lambda: r.set("j", 1), lambda: o.copy("j", "k", replace=True)),
    "getex without options": (lambda: r.set("k", 1), lambda: o.getex("k")),
    "getdel": (lambda: r.set("k", 1), lambda: o.getdel("k")),
}
for name, (setup, between) in cases.items():
    print(f"{name}: {tx(setup, between)}")
