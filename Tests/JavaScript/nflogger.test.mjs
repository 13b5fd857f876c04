// Unit tests of Sources/NFLogger/Bridge/nflogger.js against the contract of docs/BRIDGE.md.
// Each test loads the script into a fresh vm context whose `window` is a plain object, and talks
// to it through a stub channel. Run: node --test Tests/JavaScript/ (or scripts/test-js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const source = readFileSync(new URL("../../Sources/NFLogger/Bridge/nflogger.js", import.meta.url), "utf8");

// Objects made in the script's context have that context's prototypes; compare them as JSON.
const plain = (value) => JSON.parse(JSON.stringify(value));

/// Loads the script into a new context. `window` starts as `preset` (e.g. a page channel).
function load(preset = {}) {
  const window = { ...preset };
  const context = vm.createContext({ window, setTimeout, clearTimeout });
  vm.runInContext(source, context, { filename: "nflogger.js" });
  return { window, context, NFLogger: window.NFLogger };
}

/// A channel that records each message and replies with `answer(message)` (default: recorded,
/// with an event id made from the message id).
function stubChannel(answer = (m) => ({ id: m.id, status: "recorded", event: `event-${m.id}` })) {
  const sent = [];
  const fn = (message) => {
    sent.push(plain(message));
    return Promise.resolve(answer(message));
  };
  return { fn, sent };
}

/// Loads the script with a stub channel set through setChannel.
function loadWithChannel(answer) {
  const loaded = load();
  const channel = stubChannel(answer);
  assert.equal(loaded.NFLogger.setChannel(channel.fn), true);
  return { ...loaded, sent: channel.sent };
}

test("logEvent posts {v, id, call, name, parameters} and resolves the reply without its id", async () => {
  const { NFLogger, sent } = loadWithChannel();
  const reply = await NFLogger.logEvent("page.view", { path: "/home", count: 2, nested: { a: [1, "x", null] } });
  assert.deepEqual(sent, [{ v: 1, id: 1, call: "logEvent", name: "page.view", parameters: { path: "/home", count: 2, nested: { a: [1, "x", null] } } }]);
  assert.deepEqual(plain(reply), { status: "recorded", event: "event-1" });
});

test("parameters are optional, undefined properties are left out, and ids increase per page", async () => {
  const { NFLogger, sent } = loadWithChannel();
  await NFLogger.logEvent("a");
  await NFLogger.logEvent("b", null);
  await NFLogger.logEvent("c", { kept: 1, dropped: undefined });
  await NFLogger.flush();
  assert.deepEqual(sent, [
    { v: 1, id: 1, call: "logEvent", name: "a" },
    { v: 1, id: 2, call: "logEvent", name: "b" },
    { v: 1, id: 3, call: "logEvent", name: "c", parameters: { kept: 1 } },
    { v: 1, id: 4, call: "flush" },
  ]);
  // Another page (a fresh load) counts from 1 again.
  const other = loadWithChannel();
  await other.NFLogger.flush();
  assert.equal(other.sent[0].id, 1);
});

test("the posted parameters are a copy: changing the page's object afterwards changes nothing", async () => {
  let release;
  const sent = [];
  const { NFLogger } = load();
  NFLogger.setChannel((m) => { sent.push(m); return new Promise((r) => { release = () => r({ id: m.id, status: "disabled" }); }); });
  const parameters = { step: 1 };
  const pending = NFLogger.logEvent("x", parameters);
  parameters.step = 2;
  assert.equal(sent[0].parameters.step, 1);
  assert.notEqual(sent[0].parameters, parameters);
  release();
  assert.deepEqual(plain(await pending), { status: "disabled" });
});

test("every status is passed through as the app replied it, without the id", async () => {
  const replies = [
    { status: "recorded", event: "e1", aggregated: true },
    { status: "filtered", reason: "sampledOut" },
    { status: "disabled" },
    { status: "failed", error: { code: "invalidName", message: "invalid event name \"bad name\"" } },
    { status: "failed", error: { code: "originNotAllowed", message: "no" } },
  ];
  let next = 0;
  const { NFLogger } = loadWithChannel((m) => ({ id: m.id, ...replies[next++] }));
  for (const expected of replies) assert.deepEqual(plain(await NFLogger.logEvent("x")), expected);
  const flushing = loadWithChannel((m) => ({ id: m.id, status: "flushed", uploaded: 12, remaining: 0 }));
  assert.deepEqual(plain(await flushing.NFLogger.flush()), { status: "flushed", uploaded: 12, remaining: 0 });
});

test("startEvent resolves a handle whose end sends endEvent with the span id", async () => {
  const { NFLogger, sent } = loadWithChannel();
  const span = await NFLogger.startEvent("checkout.load", { items: 3 });
  assert.equal(span.id, "event-1");
  assert.equal(span.status, "recorded");
  assert.equal(typeof span.end, "function");
  const ended = await span.end({ ok: true });
  assert.deepEqual(sent, [
    { v: 1, id: 1, call: "startEvent", name: "checkout.load", parameters: { items: 3 } },
    { v: 1, id: 2, call: "endEvent", span: "event-1", parameters: { ok: true } },
  ]);
  assert.deepEqual(plain(ended), { status: "recorded", event: "event-2" });
  await span.end();
  assert.deepEqual(sent[2], { v: 1, id: 3, call: "endEvent", span: "event-1" });
});

test("a span whose start was not recorded ends with the start's reply again, sending nothing", async () => {
  for (const start of [
    { status: "filtered", reason: "notSelected" },
    { status: "disabled" },
    { status: "failed", error: { code: "backpressure", message: "later" } },
  ]) {
    const { NFLogger, sent } = loadWithChannel((m) => ({ id: m.id, ...start }));
    const span = await NFLogger.startEvent("s");
    assert.equal(span.id, null);
    assert.equal(span.status, start.status);
    assert.deepEqual(plain(await span.end({ a: 1 })), start);
    assert.equal(sent.length, 1);
  }
  // A start refused by the script itself (bad name) has no span either.
  const { NFLogger, sent } = loadWithChannel();
  const span = await NFLogger.startEvent(42);
  assert.equal(span.status, "failed");
  assert.equal(span.error.code, "invalidMessage");
  assert.equal((await span.end()).error.code, "invalidMessage");
  assert.equal(sent.length, 0);
});

test("beginTransaction: its logEvent, startEvent and end carry the transaction", async () => {
  const { NFLogger, sent } = loadWithChannel();
  const signup = await NFLogger.beginTransaction("form.signup", { variant: "b" });
  assert.equal(signup.id, "event-1");
  assert.equal(signup.status, "recorded");
  await signup.logEvent("form.field", { field: "email" });
  const request = await signup.startEvent("form.submit");
  await request.end({ code: 201 });
  await signup.end("failed", "server error");
  await signup.end("cancelled");
  await signup.end();
  assert.deepEqual(sent, [
    { v: 1, id: 1, call: "beginTransaction", name: "form.signup", parameters: { variant: "b" } },
    { v: 1, id: 2, call: "logEvent", name: "form.field", transaction: "event-1", parameters: { field: "email" } },
    { v: 1, id: 3, call: "startEvent", name: "form.submit", transaction: "event-1" },
    { v: 1, id: 4, call: "endEvent", span: "event-3", parameters: { code: 201 } },
    { v: 1, id: 5, call: "endTransaction", transaction: "event-1", outcome: "failed", reason: "server error" },
    { v: 1, id: 6, call: "endTransaction", transaction: "event-1", outcome: "cancelled" },
    { v: 1, id: 7, call: "endTransaction", transaction: "event-1", outcome: "completed" },
  ]);
});

test("a transaction that was not recorded answers its start's reply to every call, sending nothing", async () => {
  const start = { status: "filtered", reason: "sampledOut" };
  const { NFLogger, sent } = loadWithChannel((m) => ({ id: m.id, ...start }));
  const t = await NFLogger.beginTransaction("t");
  assert.equal(t.id, null);
  assert.deepEqual(plain(await t.logEvent("e")), start);
  const span = await t.startEvent("s");
  assert.equal(span.id, null);
  assert.deepEqual(plain(await span.end()), start);
  assert.deepEqual(plain(await t.end("completed")), start);
  assert.equal(sent.length, 1);
});

test("bad names and parameters resolve invalidMessage without posting", async () => {
  const { NFLogger, sent } = loadWithChannel();
  const cycle = { a: 1 };
  cycle.self = cycle;
  class Point { constructor() { this.x = 1; } }
  const bad = [
    () => NFLogger.logEvent(undefined),
    () => NFLogger.logEvent(42),
    () => NFLogger.logEvent({ name: "x" }),
    () => NFLogger.startEvent(null),
    () => NFLogger.beginTransaction(["x"]),
    () => NFLogger.logEvent("x", "a string"),
    () => NFLogger.logEvent("x", [1, 2]),
    () => NFLogger.logEvent("x", 7),
    () => NFLogger.logEvent("x", new Date()),
    () => NFLogger.logEvent("x", new Map()),
    () => NFLogger.logEvent("x", new Point()),
    () => NFLogger.logEvent("x", { f() {} }),
    () => NFLogger.logEvent("x", { deep: { f: () => 1 } }),
    () => NFLogger.logEvent("x", { s: Symbol("s") }),
    () => NFLogger.logEvent("x", { big: 10n }),
    () => NFLogger.logEvent("x", cycle),
    () => NFLogger.logEvent("x", { n: NaN }),
    () => NFLogger.logEvent("x", { n: Infinity }),
    () => NFLogger.logEvent("x", { m: new Map([["a", 1]]) }),
    () => NFLogger.logEvent("x", { get boom() { throw new Error("getter"); } }),
    () => NFLogger.logEvent("x", new Proxy({}, { getPrototypeOf() { throw new Error("trap"); } })),
  ];
  for (const [index, callBad] of bad.entries()) {
    const reply = await callBad();
    assert.equal(reply.status, "failed", `case ${index}`);
    assert.equal(reply.error.code, "invalidMessage", `case ${index}`);
    assert.equal(typeof reply.error.message, "string", `case ${index}`);
  }
  assert.equal(sent.length, 0);
  // The message names what is wrong.
  assert.match((await NFLogger.logEvent("x", { deep: { f: () => 1 } })).error.message, /parameters\.f is a function/);
  assert.match((await NFLogger.logEvent(3)).error.message, /name must be a string/);
});

test("the span's end and the transaction's calls check their arguments too", async () => {
  const { NFLogger, sent } = loadWithChannel();
  const span = await NFLogger.startEvent("s");
  const t = await NFLogger.beginTransaction("t");
  const before = sent.length;
  for (const reply of [
    await span.end({ f: () => 1 }),
    await span.end([1]),
    await t.logEvent(5),
    await t.logEvent("e", { b: 1n }),
    await t.startEvent("e", "p"),
    await t.end(3),
    await t.end("failed", { why: "x" }),
  ]) {
    assert.equal(reply.status, "failed");
    assert.equal(reply.error.code, "invalidMessage");
  }
  assert.equal(sent.length, before);
});

test("plain objects from another realm (a frame, Object.create(null)) are accepted", async () => {
  const { NFLogger, sent, context } = loadWithChannel();
  const inner = vm.runInContext("({ a: 1, b: { c: [true] } })", context);
  await NFLogger.logEvent("x", inner);
  const bare = Object.create(null);
  bare.k = "v";
  await NFLogger.logEvent("y", bare);
  assert.deepEqual(sent.map((m) => m.parameters), [{ a: 1, b: { c: [true] } }, { k: "v" }]);
});

test("a channel that throws, rejects, returns no Promise or a non-reply resolves bridgeUnavailable", async () => {
  const channels = [
    () => { throw new Error("handler gone"); },
    () => Promise.reject(new Error("native error")),
    () => Promise.reject("a string"),
    () => undefined,
    () => Promise.resolve(null),
    () => Promise.resolve("recorded"),
    () => Promise.resolve({ id: 1 }),
  ];
  for (const [index, fn] of channels.entries()) {
    const { NFLogger } = load();
    NFLogger.setChannel(fn);
    const reply = await NFLogger.logEvent("x");
    assert.equal(reply.status, "failed", `channel ${index}`);
    assert.equal(reply.error.code, "bridgeUnavailable", `channel ${index}`);
    const span = await NFLogger.startEvent("s");
    assert.equal(span.error.code, "bridgeUnavailable", `channel ${index}`);
  }
});

test("a silent channel resolves bridgeUnavailable after the timeout, and a late reply is ignored", async () => {
  const { NFLogger } = load();
  let late;
  NFLogger.setChannel((m) => new Promise((resolve) => { late = () => resolve({ id: m.id, status: "recorded", event: "e" }); }));
  assert.equal(NFLogger.setReplyTimeout(30), true);
  const started = Date.now();
  const reply = await NFLogger.logEvent("x");
  assert.ok(Date.now() - started >= 25);
  assert.equal(reply.status, "failed");
  assert.equal(reply.error.code, "bridgeUnavailable");
  assert.match(reply.error.message, /30 ms/);
  late(); // nothing to resolve any more, nothing thrown
  await new Promise((r) => setTimeout(r, 5));
  // Nonsense timeouts are refused and the previous one kept.
  assert.equal(NFLogger.setReplyTimeout(-1), false);
  assert.equal(NFLogger.setReplyTimeout("10"), false);
});

test("calls made before a channel exists are queued and sent in order by setChannel", async () => {
  const { NFLogger } = load();
  const pending = [NFLogger.logEvent("first"), NFLogger.startEvent("second"), NFLogger.flush()];
  const { fn, sent } = stubChannel();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(sent.length, 0);
  NFLogger.setChannel(fn);
  assert.deepEqual(sent.map((m) => [m.id, m.call]), [[1, "logEvent"], [2, "startEvent"], [3, "flush"]]);
  const [first, second, third] = await Promise.all(pending);
  assert.equal(first.event, "event-1");
  assert.equal(second.id, "event-2");
  assert.equal(third.status, "recorded");
  await NFLogger.logEvent("after");
  assert.equal(sent[3].id, 4);
});

test("the queue holds 100 calls; the next ones resolve queueFull; a call that times out in it is never sent", async () => {
  const { NFLogger } = load();
  NFLogger.setReplyTimeout(200);
  const queued = Array.from({ length: 100 }, (_, i) => NFLogger.logEvent(`e${i}`));
  const over = await NFLogger.logEvent("overflow");
  assert.equal(over.status, "failed");
  assert.equal(over.error.code, "queueFull");
  const { fn, sent } = stubChannel();
  NFLogger.setChannel(fn);
  const replies = await Promise.all(queued);
  assert.ok(replies.every((r) => r.status === "recorded"));
  assert.deepEqual(sent.map((m) => m.name), Array.from({ length: 100 }, (_, i) => `e${i}`));
  assert.equal(sent.some((m) => m.name === "overflow"), false);

  // Timed out while queued: resolved failed, removed from the queue, never sent later.
  const late = load();
  late.NFLogger.setReplyTimeout(20);
  const reply = await late.NFLogger.logEvent("stale");
  assert.equal(reply.error.code, "bridgeUnavailable");
  const channel = stubChannel();
  late.NFLogger.setChannel(channel.fn);
  await late.NFLogger.logEvent("fresh");
  assert.deepEqual(channel.sent.map((m) => m.name), ["fresh"]);
});

test("window.__nfloggerChannel is read at load", async () => {
  const { fn, sent } = stubChannel();
  const { NFLogger } = load({ __nfloggerChannel: fn });
  assert.equal((await NFLogger.logEvent("x")).status, "recorded");
  assert.equal(sent.length, 1);
});

test("WebKit's handler is the default channel, also when it appears after the calls", async () => {
  const posted = [];
  const nflogger = { postMessage: (m) => { posted.push(plain(m)); return Promise.resolve({ id: m.id, status: "disabled" }); } };
  const present = load({ webkit: { messageHandlers: { nflogger } } });
  assert.deepEqual(plain(await present.NFLogger.logEvent("x", { a: 1 })), { status: "disabled" });
  assert.deepEqual(posted, [{ v: 1, id: 1, call: "logEvent", name: "x", parameters: { a: 1 } }]);

  // No handler at load: the call waits, and the poll finds the handler once it is there.
  posted.length = 0;
  const later = load();
  const pending = later.NFLogger.logEvent("early");
  later.window.webkit = { messageHandlers: { nflogger } };
  assert.deepEqual(plain(await pending), { status: "disabled" });
  assert.deepEqual(posted.map((m) => m.name), ["early"]);

  // A call made when the handler has appeared, before the poll ran, goes after the waiting ones.
  posted.length = 0;
  const racing = load();
  const waiting = racing.NFLogger.logEvent("waiting");
  racing.window.webkit = { messageHandlers: { nflogger } };
  const next = racing.NFLogger.logEvent("next");
  await Promise.all([waiting, next]);
  assert.deepEqual(posted.map((m) => [m.id, m.name]), [[1, "waiting"], [2, "next"]]);

  // setChannel wins over WebKit's handler.
  const { fn, sent } = stubChannel();
  present.NFLogger.setChannel(fn);
  await present.NFLogger.flush();
  assert.equal(sent.length, 1);
  assert.equal(posted.length, 2);
});

test("defining it twice keeps the first; the API object cannot be changed by the page", async () => {
  const { window, context, NFLogger } = load();
  vm.runInContext(source, context);
  assert.equal(window.NFLogger, NFLogger);
  const existing = { mine: true };
  const other = load({ NFLogger: existing });
  assert.equal(other.window.NFLogger, existing);
  assert.equal(Object.isFrozen(NFLogger), true);
  assert.equal(NFLogger.setChannel("not a function"), false);
});

test("nothing ever throws synchronously or rejects", async () => {
  const weird = [undefined, null, 0, NaN, "", "x", {}, [], () => 1, Symbol("s"), 1n, Object.create(null), new Proxy({}, {})];
  const setups = [
    () => load().NFLogger, // no channel: queued, then timed out
    () => loadWithChannel().NFLogger,
    () => { const { NFLogger } = load(); NFLogger.setChannel(() => { throw new Error("x"); }); return NFLogger; },
    () => { const { NFLogger } = load(); NFLogger.setChannel(() => Promise.reject(new Error("x"))); return NFLogger; },
  ];
  for (const setup of setups) {
    const NFLogger = setup();
    NFLogger.setReplyTimeout(20);
    const promises = [];
    for (const a of weird) {
      for (const b of weird) {
        promises.push(NFLogger.logEvent(a, b), NFLogger.startEvent(a, b), NFLogger.beginTransaction(a, b));
      }
      NFLogger.setChannel(a === undefined ? a : undefined);
      NFLogger.setReplyTimeout(a);
      NFLogger.setReplyTimeout(20);
    }
    promises.push(NFLogger.flush());
    const results = await Promise.allSettled(promises);
    for (const result of results) {
      assert.equal(result.status, "fulfilled");
      assert.equal(typeof result.value.status, "string");
    }
    // The handles' methods do not throw or reject either.
    const handles = results.map((r) => r.value).filter((v) => typeof v.end === "function");
    const more = [];
    for (const h of handles.slice(0, 20)) {
      more.push(h.end(...weird.slice(0, 2)), h.end(Symbol("s"), 1n));
      if (h.logEvent) more.push(h.logEvent(1n, 1n), h.startEvent(null, []));
    }
    for (const result of await Promise.allSettled(more)) assert.equal(result.status, "fulfilled");
  }
});
