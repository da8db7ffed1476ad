// scripts/test.d/npm/clients.mjs SOCKET LABEL — each Node.js library
// through its own API against the Redis-protocol server on SOCKET:
// ioredis (commands, pipeline, multi, watch, scanStream), node-redis
// (commands, multi, watch, scanIterator), keyv with @keyv/redis (the
// key-value store API), cache-manager over that store (get/set/mget/wrap/
// ttl/del/clear), LangChain.js's Redis chat histories (@langchain/redis
// over node-redis 4, @langchain/community's over ioredis: LPUSH, EXPIRE,
// LRANGE, DEL) and LLM caches (GET/SET); issue 33: ioredis and
// node-redis pub/sub (channels, patterns, keyspace events) and scripts
// (defineCommand, EVALSHA after SCRIPT FLUSH), node-redis's client-side
// cache (RESP3, CLIENT TRACKING). Prints "ok NAME" or "FAIL NAME:
// why" per check and exits non-zero if one failed. LangChain's vector
// stores need FT.* (RediSearch), which tiercache does not have.
import assert from "node:assert/strict";
import Redis from "ioredis";
import { createClient, WatchError, BasicClientSideCache } from "redis";
import Keyv from "keyv";
import KeyvRedis from "@keyv/redis";
import { createCache } from "cache-manager";
import { RedisChatMessageHistory, RedisCache } from "@langchain/redis";
import { RedisChatMessageHistory as IORedisChatMessageHistory } from "@langchain/community/stores/message/ioredis";
import { RedisCache as IORedisCache } from "@langchain/community/caches/ioredis";
import { HumanMessage, AIMessage } from "@langchain/core/messages";

const [sock, label] = process.argv.slice(2);
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok   ${label} ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${label} ${name}: ${e && e.message}`);
  }
}

// --- ioredis ------------------------------------------------------------------
const io = new Redis({ path: sock, maxRetriesPerRequest: 1, lazyConnect: true });
await check("ioredis connect", () => io.connect());
await check("ioredis set/get/mget", async () => {
  await io.flushall();
  assert.equal(await io.set("io:a", "1", "EX", 100), "OK");
  assert.equal(await io.get("io:a"), "1");
  assert.deepEqual(await io.mget("io:a", "io:none"), ["1", null]);
  assert.equal(await io.ttl("io:a"), 100);
  const big = Buffer.alloc(1 << 20, 7);
  await io.set("io:big", big);
  assert.ok(big.equals(await io.getBuffer("io:big")));
});
await check("ioredis pipeline", async () => {
  const p = io.pipeline();
  for (let i = 0; i < 500; i++) p.set(`io:p${i}`, String(i));
  for (let i = 0; i < 500; i++) p.get(`io:p${i}`);
  const res = await p.exec();
  assert.equal(res.length, 1000);
  for (let i = 0; i < 500; i++) assert.deepEqual(res[500 + i], [null, String(i)]);
});
await check("ioredis multi", async () => {
  const res = await io.multi().set("io:tx", "1").get("io:tx").exec();
  assert.deepEqual(res, [[null, "OK"], [null, "1"]]);
});
await check("ioredis watch aborts", async () => {
  const other = new Redis({ path: sock });
  await io.watch("io:w");
  await other.set("io:w", "other");
  const res = await io.multi().set("io:w", "mine").exec();
  assert.equal(res, null); // EXEC's null array
  assert.equal(await io.get("io:w"), "other");
  other.disconnect();
});
await check("ioredis scanStream", async () => {
  const keys = new Set();
  for await (const batch of io.scanStream({ match: "io:p1*", count: 50 })) for (const k of batch) keys.add(k);
  assert.equal(keys.size, 111);
});
await check("ioredis rename/copy/expiretime", async () => {
  assert.equal(await io.rename("io:a", "io:b"), "OK");
  assert.equal(await io.exists("io:a"), 0);
  assert.equal(await io.copy("io:b", "io:c"), 1);
  assert.equal(await io.get("io:c"), "1");
  assert.ok((await io.expiretime("io:c")) > Date.now() / 1000);
  await assert.rejects(io.rename("io:none", "io:x"), /no such key/);
});
io.disconnect();

// --- node-redis ------------------------------------------------------------------
const nr = createClient({ socket: { path: sock } });
nr.on("error", () => {});
await check("node-redis connect", () => nr.connect());
await check("node-redis set/get/mGet", async () => {
  assert.equal(await nr.set("nr:a", "1", { EX: 100 }), "OK");
  assert.equal(await nr.get("nr:a"), "1");
  assert.deepEqual(await nr.mGet(["nr:a", "nr:none"]), ["1", null]);
  assert.equal(await nr.set("nr:a", "2", { NX: true }), null);
  assert.equal(await nr.ttl("nr:a"), 100);
});
await check("node-redis multi", async () => {
  const res = await nr.multi().set("nr:tx", "1").get("nr:tx").exec();
  assert.deepEqual(res, ["OK", "1"]);
});
await check("node-redis watch aborts", async () => {
  const c = await nr.duplicate().connect(); // WATCH holds a connection
  const other = await nr.duplicate().connect();
  await c.watch("nr:w");
  await other.set("nr:w", "other");
  await assert.rejects(c.multi().set("nr:w", "mine").exec(), WatchError);
  assert.equal(await nr.get("nr:w"), "other");
  await c.close();
  await other.close();
});
await check("node-redis scanIterator", async () => {
  for (let i = 0; i < 300; i++) await nr.set(`nr:s${i}`, "v");
  const keys = new Set();
  for await (const batch of nr.scanIterator({ MATCH: "nr:s2*", COUNT: 50 })) for (const k of batch) keys.add(k);
  assert.equal(keys.size, 111);
});
await check("node-redis renameNX/copy", async () => {
  assert.equal(await nr.renameNX("nr:a", "nr:tx"), 0);
  assert.equal(await nr.copy("nr:a", "nr:tx", { REPLACE: true }), 1);
  assert.equal(await nr.get("nr:tx"), "1");
});
await nr.close();

// --- keyv with @keyv/redis ----------------------------------------------------------
const store = new KeyvRedis({ socket: { path: sock } });
const keyv = new Keyv({ store, namespace: "kv" });
keyv.on("error", () => {});
await check("keyv set/get/has/delete", async () => {
  const emb = { model: "m", vector: Array.from({ length: 384 }, (_, i) => i / 384) };
  assert.equal(await keyv.set("emb:1", emb), true);
  assert.deepEqual(await keyv.get("emb:1"), emb);
  assert.equal(await keyv.has("emb:1"), true);
  assert.equal(await keyv.delete("emb:1"), true);
  assert.equal(await keyv.get("emb:1"), undefined);
});
await check("keyv ttl", async () => {
  await keyv.set("short", "v", 50);
  assert.equal(await keyv.get("short"), "v");
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(await keyv.get("short"), undefined);
});
await check("keyv setMany/getMany/clear", async () => {
  await keyv.setMany([{ key: "m1", value: 1 }, { key: "m2", value: 2 }]);
  assert.deepEqual(await keyv.getMany(["m1", "m2", "m3"]), [1, 2, undefined]);
  await keyv.clear();
  assert.deepEqual(await keyv.getMany(["m1", "m2"]), [undefined, undefined]);
});

// --- cache-manager over the Redis store -------------------------------------------------
const cache = createCache({ stores: [new Keyv({ store: new KeyvRedis({ socket: { path: sock } }), namespace: "cm" })] });
await check("cache-manager set/get/mget/del", async () => {
  await cache.set("resp:1", { text: "hello" }, 10000);
  assert.deepEqual(await cache.get("resp:1"), { text: "hello" });
  assert.deepEqual(await cache.mget(["resp:1", "resp:none"]), [{ text: "hello" }, undefined]);
  const ttl = await cache.ttl("resp:1");
  assert.ok(ttl > Date.now() && ttl <= Date.now() + 10000, `ttl ${ttl}`);
  await cache.del("resp:1");
  assert.equal(await cache.get("resp:1"), undefined);
});
await check("cache-manager wrap", async () => {
  let calls = 0;
  const llm = async () => { calls++; return "answer"; };
  assert.equal(await cache.wrap("prompt:1", llm, 10000), "answer");
  assert.equal(await cache.wrap("prompt:1", llm, 10000), "answer");
  assert.equal(calls, 1);
});
await check("cache-manager clear", async () => {
  await cache.set("c1", 1);
  await cache.clear();
  assert.equal(await cache.get("c1"), undefined);
});
await cache.disconnect();
await keyv.disconnect();

// --- LangChain.js ---------------------------------------------------------------
// A conversation through each chat history class: messages come back in
// the order added, with their types, the session has its TTL, and clear
// empties it.
async function chatHistory(h, raw, key) {
  await h.clear();
  await h.addMessage(new HumanMessage("what is a cold tier?"));
  await h.addMessage(new AIMessage("an NVMe KV namespace"));
  await h.addMessage(new HumanMessage("and warm?"));
  const msgs = await h.getMessages();
  assert.deepEqual(msgs.map((m) => [m.getType(), m.content]),
    [["human", "what is a cold tier?"], ["ai", "an NVMe KV namespace"], ["human", "and warm?"]]);
  const ttl = await raw.ttl(key);
  assert.ok(ttl > 500 && ttl <= 600, `session ttl ${ttl}`);
  await h.clear();
  assert.deepEqual(await h.getMessages(), []);
}
const lcHistory = new RedisChatMessageHistory({ sessionId: "lc:chat", sessionTTL: 600, config: { socket: { path: sock } } });
await check("@langchain/redis RedisChatMessageHistory", async () => {
  await lcHistory.ensureReadiness();
  await chatHistory(lcHistory, lcHistory.client, "lc:chat");
});
await lcHistory.client.quit();
const io2 = new Redis({ path: sock, maxRetriesPerRequest: 1 });
await check("@langchain/community ioredis RedisChatMessageHistory", () =>
  chatHistory(new IORedisChatMessageHistory({ sessionId: "lc:io-chat", sessionTTL: 600, client: io2 }), io2, "lc:io-chat"));
// The LLM caches: a generation stored under (prompt, llm) is found again,
// another prompt misses.
async function llmCache(c) {
  await c.update("prompt 1", "llm-a", [{ text: "answer 1" }, { text: "answer 1b" }]);
  assert.deepEqual((await c.lookup("prompt 1", "llm-a")).map((g) => g.text), ["answer 1", "answer 1b"]);
  assert.equal(await c.lookup("prompt 2", "llm-a"), null);
}
await check("@langchain/community ioredis RedisCache (ttl)", () => llmCache(new IORedisCache(io2, { ttl: 60 })));
const nr2 = createClient({ socket: { path: sock } });
await nr2.connect();
await check("@langchain/redis RedisCache", () => llmCache(new RedisCache(nr2)));
await nr2.close();
await io2.quit();

// --- issue 33: pub/sub, scripts, client-side caching ---------------------------
function waitFor(pred, what, ms = 5000) {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const t = setInterval(() => {
      if (pred()) { clearInterval(t); resolve(); }
      else if (Date.now() - start > ms) { clearInterval(t); reject(new Error(`timed out waiting for ${what}`)); }
    }, 5);
  });
}
const io3 = new Redis({ path: sock, maxRetriesPerRequest: 1 });
await check("ioredis pub/sub with keyspace events", async () => {
  await io3.config("SET", "notify-keyspace-events", "KEA");
  const sub = new Redis({ path: sock });
  const got = [];
  sub.on("message", (ch, m) => got.push(`${ch} ${m}`));
  sub.on("pmessage", (p, ch, m) => got.push(`${p} ${ch} ${m}`));
  await sub.subscribe("jobs");
  await sub.psubscribe("__keyevent@0__:*");
  assert.equal(await io3.publish("jobs", "embed 7"), 1);
  await io3.set("ks:1", "v");
  await waitFor(() => got.length >= 2, "two messages");
  assert.deepEqual(got, ["jobs embed 7", "__keyevent@0__:* __keyevent@0__:set ks:1"]);
  await sub.quit();
  await io3.config("SET", "notify-keyspace-events", "");
});
await check("ioredis defineCommand (EVALSHA, EVAL after SCRIPT FLUSH)", async () => {
  io3.defineCommand("cappedIncr", { numberOfKeys: 1,
    lua: "local n = redis.call('incr', KEYS[1]); if n > tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1]); return tonumber(ARGV[1]) end; return n" });
  const got = [];
  for (let i = 0; i < 5; i++) {
    got.push(await io3.cappedIncr("io:cap", 3));
    if (i === 1) await io3.script("FLUSH");
  }
  assert.deepEqual(got, [1, 2, 3, 3, 3]);
  await assert.rejects(io3.eval("return redis.call('nosuch')", 0), /Unknown Redis command called from script/);
});
await io3.quit();

const nr3 = createClient({ socket: { path: sock } });
await nr3.connect();
await check("node-redis pub/sub (subscribe, pSubscribe, publish)", async () => {
  const sub = nr3.duplicate();
  await sub.connect();
  const got = [];
  await sub.subscribe("news", (m, ch) => got.push(`${ch} ${m}`));
  await sub.pSubscribe("n*", (m, ch) => got.push(`p ${ch} ${m}`));
  assert.equal(await nr3.publish("news", "hello"), 2);
  await waitFor(() => got.length >= 2, "two messages");
  assert.deepEqual(got.sort(), ["news hello", "p news hello"]);
  await sub.unsubscribe("news");
  await sub.pUnsubscribe("n*");
  await sub.close();
});
await check("node-redis scripts (eval, evalSha, scriptLoad)", async () => {
  const sha = await nr3.scriptLoad("return redis.call('get', KEYS[1])");
  await nr3.set("nr:s", "v");
  assert.equal(await nr3.evalSha(sha, { keys: ["nr:s"] }), "v");
  assert.equal(await nr3.eval("return {KEYS[1], ARGV[1]}", { keys: ["k"], arguments: ["a"] }).then(r => r.join()), "k,a");
  assert.deepEqual(await nr3.scriptExists(sha), [1]);
});
await check("node-redis client-side cache (RESP3): a write by another client invalidates", async () => {
  const cache = new BasicClientSideCache({ ttl: 0, maxEntries: 0 });
  const cc = createClient({ socket: { path: sock }, RESP: 3, clientSideCache: cache });
  await cc.connect();
  await nr3.set("csc:k", "v1");
  assert.equal(await cc.get("csc:k"), "v1");
  assert.equal(await cc.get("csc:k"), "v1");
  const hits = cache.stats().hitCount;
  assert.ok(hits >= 1, `a repeated GET is served from the client's cache (hits ${hits})`);
  await nr3.set("csc:k", "v2");
  let v;
  await waitFor(() => { cc.get("csc:k").then(x => { v = x; }); return v === "v2"; }, "the invalidated key's new value");
  await cc.close();
});
await nr3.close();

console.log(`${label}: ${failed} failed`);
process.exit(failed ? 1 : 0);
