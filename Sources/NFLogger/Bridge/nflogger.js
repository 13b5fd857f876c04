/*
 * nflogger.js: the page side of NFLogger's web bridge (docs/BRIDGE.md is the message contract).
 *
 * An app injects this file into its web views as a classic script at document start. It defines
 * `window.NFLogger` (and does nothing if it is already defined):
 *
 *   NFLogger.logEvent(name, parameters)          → Promise(reply)
 *   NFLogger.startEvent(name, parameters)        → Promise({ id, status, …reply, end(parameters) → Promise(reply) })
 *   NFLogger.beginTransaction(name, parameters)  → Promise({ id, status, …reply,
 *                                                    logEvent(name, parameters), startEvent(name, parameters),
 *                                                    end(outcome = "completed", reason) → Promise(reply) })
 *   NFLogger.flush()                             → Promise(reply)
 *   NFLogger.setChannel(fn)                      fn(message) → Promise(reply); sends the queued calls
 *   NFLogger.setReplyTimeout(ms)                 how long a call waits for its reply (default 10 000)
 *
 * The contract with the page:
 * - Every call returns a Promise that resolves, never rejects, with the reply of docs/BRIDGE.md
 *   without its `id`: {status: "recorded", event}, {status: "filtered", reason},
 *   {status: "disabled"}, {status: "failed", error: {code, message}}, {status: "flushed", uploaded, remaining}.
 *   Nothing here throws into the page's code.
 * - Bad arguments (a name that is not a string, parameters that are not a plain object, a value
 *   JSON cannot carry: a function, a symbol, a BigInt, a cycle, a non-finite number, a Map…)
 *   resolve failed with code "invalidMessage" and post nothing. Properties whose value is
 *   `undefined` are left out, as JSON.stringify does.
 * - A channel that throws or rejects, or a reply that does not come within the timeout, resolves
 *   failed with code "bridgeUnavailable". The timeout counts from the call, queue time included:
 *   a call that timed out in the queue is never sent, so the page is never told "failed" about
 *   an event that was then recorded.
 * - Calls made before any channel exists are queued (at most 100; beyond that a call resolves
 *   failed with code "queueFull") and sent in order once a channel appears.
 * - A span or transaction whose start was not recorded has no id: its `end`, and the
 *   transaction's `logEvent` and `startEvent`, resolve with the start's reply again, sending nothing.
 *
 * The channel, first found wins: NFLogger.setChannel(fn); a function in `window.__nfloggerChannel`
 * when this script loads; WebKit's `window.webkit.messageHandlers.nflogger.postMessage`, whose
 * reply handler returns a Promise (looked for at each call, and every 100 ms while calls wait).
 *
 * Plain ES2017, no modules, no dependencies: Node loads it with `vm` for the tests
 * (Tests/JavaScript, scripts/test-js).
 */
(function (root) {
  "use strict";
  if (root.NFLogger) return;

  var QUEUE_LIMIT = 100;
  var POLL_MS = 100;
  var replyTimeout = 10000;
  var nextId = 1; // ids increase per page; the reply carries them back
  var channel = typeof root.__nfloggerChannel === "function" ? root.__nfloggerChannel : null;
  var queue = []; // calls waiting for a channel: { message, settle }
  var pollTimer = null;

  function failed(code, message) {
    return { status: "failed", error: { code: code, message: message } };
  }

  // WebKit's handler, if the app registered one named "nflogger" (it may appear after load).
  function currentChannel() {
    if (channel) return channel;
    try {
      var handler = root.webkit && root.webkit.messageHandlers && root.webkit.messageHandlers.nflogger;
      if (handler && typeof handler.postMessage === "function") {
        channel = function (message) { return handler.postMessage(message); };
      }
    } catch (e) { /* a hostile or odd `webkit` property: no channel */ }
    return channel;
  }

  // Plain: made by `{}` or Object.create(null), in any realm (a frame's, or the tests' vm context).
  function isPlainObject(value) {
    if (value === null || typeof value !== "object") return false;
    if (Object.prototype.toString.call(value) !== "[object Object]") return false;
    var proto = Object.getPrototypeOf(value);
    return proto === null || Object.getPrototypeOf(proto) === null;
  }

  // A JSON copy of the parameters, or the reason they cannot be sent. The copy is what is posted:
  // it is what the app will read, and later changes to the page's object do not reach it.
  function cleanParameters(parameters) {
    if (parameters === undefined || parameters === null) return { value: undefined };
    if (!isPlainObject(parameters)) return { error: "parameters must be a plain object" };
    var problem = null;
    var text;
    try {
      text = JSON.stringify(parameters, function (key, value) {
        // JSON.stringify drops functions and symbols and writes NaN as null without a word.
        var type = typeof value;
        var where = key === "" ? "parameters" : "parameters." + key;
        if (type === "function" || type === "symbol") problem = problem || where + " is a " + type;
        else if (type === "number" && !isFinite(value)) problem = problem || where + " is not a finite number";
        else if (type === "object" && value !== null && !Array.isArray(value) && !isPlainObject(value)) {
          problem = problem || where + " is not a plain object (" + Object.prototype.toString.call(value) + ")";
        }
        return value;
      });
    } catch (e) {
      // A cycle, a BigInt, or a throwing toJSON/getter.
      return { error: "parameters cannot be serialised: " + (e && e.message ? e.message : String(e)) };
    }
    if (problem) return { error: problem + ": it cannot be serialised" };
    return { value: JSON.parse(text) };
  }

  // The reply without its id; anything that is not a reply object becomes bridgeUnavailable.
  function readReply(reply) {
    if (!reply || typeof reply !== "object" || typeof reply.status !== "string") {
      return failed("bridgeUnavailable", "the app's reply is not a reply object");
    }
    var result = {};
    Object.keys(reply).forEach(function (key) { if (key !== "id") result[key] = reply[key]; });
    return result;
  }

  function send(message, settle, fn) {
    var pending;
    try {
      pending = fn(message);
    } catch (e) {
      return settle(failed("bridgeUnavailable", "the channel threw: " + (e && e.message ? e.message : String(e))));
    }
    if (!pending || typeof pending.then !== "function") {
      // A WebKit handler registered without a reply handler returns undefined.
      return settle(failed("bridgeUnavailable", "the channel returned no Promise (does the app's handler reply?)"));
    }
    pending.then(
      function (reply) { settle(readReply(reply)); },
      function (e) { settle(failed("bridgeUnavailable", "the channel failed: " + (e && e.message ? e.message : String(e)))); }
    );
  }

  function drain() {
    var fn = currentChannel();
    if (!fn) return;
    var waiting = queue;
    queue = [];
    waiting.forEach(function (entry) { send(entry.message, entry.settle, fn); });
  }

  // Polls for WebKit's handler only while calls wait, so an idle page runs no timer.
  function poll() {
    if (pollTimer !== null || queue.length === 0) return;
    pollTimer = setTimeout(function () {
      pollTimer = null;
      drain();
      poll();
    }, POLL_MS);
  }

  // Posts `fields` as one message; resolves with the reply (never rejects).
  function call(fields) {
    return new Promise(function (resolve) {
      var message = { v: 1, id: nextId++ };
      Object.keys(fields).forEach(function (key) { if (fields[key] !== undefined) message[key] = fields[key]; });
      var done = false;
      var timer = null;
      var entry = { message: message, settle: settle };
      function settle(result) {
        if (done) return;
        done = true;
        if (timer !== null) clearTimeout(timer);
        var index = queue.indexOf(entry);
        if (index >= 0) queue.splice(index, 1); // timed out while waiting: never sent
        resolve(result);
      }
      var fn = currentChannel();
      if (!fn && queue.length >= QUEUE_LIMIT) {
        return settle(failed("queueFull", "no channel to the app yet and " + QUEUE_LIMIT + " calls already wait"));
      }
      var limit = replyTimeout;
      timer = setTimeout(function () {
        settle(failed("bridgeUnavailable", "no reply from the app within " + limit + " ms"));
      }, limit);
      if (fn) {
        drain(); // earlier calls first
        send(message, settle, fn);
      } else {
        queue.push(entry);
        poll();
      }
    });
  }

  // Checks the arguments, then posts; a bad argument resolves invalidMessage and posts nothing.
  function checked(fields, parameters) {
    try {
      if ("name" in fields && typeof fields.name !== "string") {
        return Promise.resolve(failed("invalidMessage", "name must be a string, not " + typeOf(fields.name)));
      }
      if (arguments.length > 1) {
        var cleaned = cleanParameters(parameters);
        if (cleaned.error) return Promise.resolve(failed("invalidMessage", cleaned.error));
        fields.parameters = cleaned.value;
      }
      return call(fields);
    } catch (e) {
      return Promise.resolve(failed("invalidMessage", "the call could not be read: " + (e && e.message ? e.message : String(e))));
    }
  }

  function typeOf(value) {
    return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
  }

  // The handle of a started span: `end` sends endEvent, or repeats the start's reply if there is no span.
  function spanHandle(reply) {
    var id = reply.status === "recorded" ? reply.event : null;
    return Object.assign({}, reply, {
      id: id,
      end: function (parameters) {
        if (id === null) return Promise.resolve(Object.assign({}, reply));
        return checked({ call: "endEvent", span: id }, parameters);
      }
    });
  }

  function startEvent(name, parameters, transaction) {
    return checked({ call: "startEvent", name: name, transaction: transaction }, parameters).then(spanHandle);
  }

  function transactionHandle(reply) {
    var id = reply.status === "recorded" ? reply.event : null;
    var again = function () { return Promise.resolve(Object.assign({}, reply)); };
    return Object.assign({}, reply, {
      id: id,
      logEvent: function (name, parameters) {
        if (id === null) return again();
        return checked({ call: "logEvent", name: name, transaction: id }, parameters);
      },
      startEvent: function (name, parameters) {
        if (id === null) return again().then(spanHandle);
        return startEvent(name, parameters, id);
      },
      end: function (outcome, reason) {
        if (id === null) return again();
        if (outcome === undefined) outcome = "completed";
        if (typeof outcome !== "string") return Promise.resolve(failed("invalidMessage", "outcome must be a string, not " + typeOf(outcome)));
        if (reason !== undefined && typeof reason !== "string") {
          return Promise.resolve(failed("invalidMessage", "reason must be a string, not " + typeOf(reason)));
        }
        return checked({ call: "endTransaction", transaction: id, outcome: outcome, reason: reason });
      }
    });
  }

  root.NFLogger = Object.freeze({
    logEvent: function (name, parameters) {
      return checked({ call: "logEvent", name: name }, parameters);
    },
    startEvent: function (name, parameters) {
      return startEvent(name, parameters, undefined);
    },
    beginTransaction: function (name, parameters) {
      return checked({ call: "beginTransaction", name: name }, parameters).then(transactionHandle);
    },
    flush: function () {
      return checked({ call: "flush" });
    },
    setChannel: function (fn) {
      if (typeof fn !== "function") return false;
      channel = fn;
      drain();
      return true;
    },
    setReplyTimeout: function (ms) {
      if (typeof ms !== "number" || !(ms > 0)) return false;
      replyTimeout = ms;
      return true;
    }
  });
})(typeof window !== "undefined" ? window : globalThis);
