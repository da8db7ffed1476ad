// scripts/test.d/npm/cluster.mjs HOST:PORT [one-node] — ioredis's Cluster
// seeded with HOST:PORT (password "pw", the ready check reading CLUSTER
// INFO): MGET and MSET of one slot, commands across slots (the server
// answers CROSSSLOT), pipelines and a transaction on one slot, a
// transaction across slots, and a pipeline of 400 over every slot, one
// pipeline a node. Prints one line per step: 35-npm runs it against a real
// Redis Cluster and against tiercache in cluster mode and compares the
// two. With "one-node" it also checks that the client sees one master
// owning every slot at HOST:PORT.
import Redis from "ioredis";
import calculateSlot from "cluster-key-slot"; // ioredis's own dependency: its slot function

const [addr, mode] = process.argv.slice(2);
const [host, port] = [addr.slice(0, addr.lastIndexOf(":")), Number(addr.slice(addr.lastIndexOf(":") + 1))];
const c = new Redis.Cluster([{ host, port }], {
  redisOptions: { password: "pw" },
  enableReadyCheck: true,
  maxRedirections: 3,
});

async function step(name, f) {
  try {
    console.log(name, JSON.stringify(await f()));
  } catch (e) {
    console.log(name, "rejected:", e.message);
  }
}

// Keys: a 15495, b 3300, x 16287, y 12222; {u} one slot.
await step("flushall every master", async () => (await Promise.all(c.nodes("master").map((n) => n.flushall()))).every((r) => r === "OK"));
await step("mset tagged", () => c.mset("{u}a", "1", "{u}b", "2"));
await step("mget tagged", () => c.mget("{u}a", "{u}b", "{u}none"));
await step("mget across slots", () => c.mget("a", "b"));
await step("mset across slots", () => c.mset("x", "1", "y", "2"));
await step("del across slots", () => c.del("x", "b"));
await step("exists across slots", () => c.exists("a", "b"));
await step("rename across slots", () => c.rename("{u}a", "x"));
await step("pipeline on one slot", async () => {
  const p = c.pipeline();
  for (let i = 0; i < 200; i++) p.set(`{p}${i}`, String(i));
  for (let i = 0; i < 200; i++) p.get(`{p}${i}`);
  const res = await p.exec();
  return res.slice(200).filter(([err, v], i) => err || v !== String(i)).length + " wrong";
});
await step("pipelines over every slot", async () => {
  // A pipeline goes to one node: one pipeline a node, as an application
  // that batches by node does.
  const byNode = new Map();
  for (let i = 0; i < 400; i++) {
    const key = `k${i}`;
    const node = c.slots[calculateSlot(key)][0];
    if (!byNode.has(node)) byNode.set(node, []);
    byNode.get(node).push(key);
  }
  let wrong = 0;
  for (const keys of byNode.values()) {
    const p = c.pipeline();
    for (const k of keys) p.set(k, k).get(k);
    const res = await p.exec();
    wrong += res.filter(([err, v], i) => err || (i % 2 === 1 && v !== keys[(i - 1) / 2])).length;
  }
  return wrong + " wrong";
});
await step("multi on one slot", () => c.multi().incr("{u}n").incr("{u}n").get("{u}n").exec());
await step("multi across slots", () => c.multi().set("x", "1").set("y", "2").exec());
await step("after: x y", () => c.exists("x").then(async (n) => [n, await c.exists("y")]));
await step("cluster keyslot", () => c.cluster("KEYSLOT", "{user1}:profile"));

let failed = false;
if (mode === "one-node") {
  const masters = c.nodes("master").map((n) => `${n.options.host}:${n.options.port}`);
  const owners = new Set(c.slots.map((s) => s && s[0]));
  if (masters.join() !== addr || owners.size !== 1 || !owners.has(addr) || c.slots.length !== 16384) {
    console.error(`topology: masters ${masters}, slot owners ${[...owners]}, ${c.slots.length} slots`);
    failed = true;
  }
}
c.disconnect();
process.exit(failed ? 1 : 0);
