// The dashboard: asks for a read token, reads the collector's JSON endpoints with it
// (/v1/apps, /v1/report, /v1/report/series, /v1/report/policy; docs/DASHBOARD.md), and lays out
// what they say. Every number shown is a value of those answers, formatted (each carries
// data-key, its path in the answer, and data-format); the page sums, averages or ranks nothing.
// Values are written as text, never as HTML: event names, versions and policies come from
// devices and operators.
"use strict";

(function () {
  var TOKEN_KEY = "nflog.dashboard.readToken";
  var HOUR = 3600000;
  var DAY = 24 * HOUR;
  var RANGES = { "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY, "90d": 90 * DAY };
  var BUCKETS = { second: 1000, minute: 60000, hour: HOUR, day: DAY };
  var MAX_BUCKETS = 2000;
  // The most bars the "its data" range draws: the finest bucket that keeps to it is chosen.
  var READABLE_BUCKETS = 240;
  var TOP_NAMES = 15;
  var TOP_USE_CASES = 15;
  var TOP_RATES = 10;
  var TOP_AGGREGATES = 20;

  // spans: per app, its first and last event time from /v1/stats (null: none, or not said);
  // autoBucket: the "its data" range picks the bucket until one is chosen.
  var state = { token: null, apps: [], versions: {}, spans: {}, autoBucket: true, last: null, loading: 0, showAllUseCases: false, funnel: null, measure: null };
  window.__done = false;
  window.__state = "starting";

  function $(id) { return document.getElementById(id); }

  function element(tag, cls, content) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined) e.textContent = content;
    return e;
  }

  // ---- formatting: one function per data-format, each the page's only way to show a value ----

  function grouped(integer) {
    return String(integer).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  var FORMATS = {
    count: function (v) { return typeof v === "number" ? grouped(v) : "—"; },
    ms: function (v) {
      if (typeof v !== "number") return "—";
      return v >= 100 ? grouped(Math.round(v)) + " ms" : v.toFixed(1) + " ms";
    },
    rate: function (v) { return typeof v === "number" ? (v * 100).toFixed(1) + "%" : "—"; },
    // As the CLI report prints measures (AnalyticsReport.number): they have no unit it knows.
    number: function (v) {
      if (typeof v !== "number") return "—";
      var m = Math.abs(v);
      if (m === 0) return "0";
      if (m >= 100 && m < 1e9) return v.toFixed(0);
      if (m >= 1 && m < 100) return v.toFixed(2);
      return v.toPrecision(3);
    },
    time: function (v) { return typeof v === "number" ? new Date(v).toISOString().slice(0, 16).replace("T", " ") + " UTC" : "—"; },
    text: function (v) { return typeof v === "string" ? v : "—"; },
  };

  function lookup(data, path) {
    var value = data;
    for (var i = 0; i < path.length; i++) {
      if (value === null || value === undefined || typeof value !== "object") return undefined;
      value = value[path[i]];
    }
    return value;
  }

  // A value of an answer, as shown: its path is in data-key, so what is on screen can be checked
  // against the answer itself.
  function value(path, format, tag) {
    var e = element(tag || "span", "v", FORMATS[format](lookup(state.last, path)));
    e.setAttribute("data-key", JSON.stringify(path));
    e.setAttribute("data-format", format);
    return e;
  }

  function tile(parent, caption, path, format) {
    var t = element("div", "tile");
    t.appendChild(value(path, format, "strong"));
    t.appendChild(element("span", "caption", caption));
    parent.appendChild(t);
    return t;
  }

  function noData(body, why) {
    var p = element("p", "no-data", "no data");
    if (why) p.appendChild(element("span", "why", " (" + why + ")"));
    body.appendChild(p);
  }

  function note(body, text) { body.appendChild(element("p", "note", text)); }

  // "… not listed: N", when the answer says it left some out.
  function omitted(body, text, path) {
    if (!(lookup(state.last, path) > 0)) return;
    var line = element("p", "note", text + ": ");
    line.appendChild(value(path, "count"));
    body.appendChild(line);
  }

  function table(body, headings, rows) {
    var wrap = element("div", "table-wrap");
    var t = element("table");
    var head = element("tr");
    headings.forEach(function (h) { head.appendChild(element("th", h.numeric ? "num" : "", h.label)); });
    t.appendChild(element("thead")).appendChild(head);
    var tbody = t.appendChild(element("tbody"));
    rows.forEach(function (cells) {
      var tr = element("tr");
      cells.forEach(function (cell, i) {
        var td = element("td", headings[i].numeric ? "num" : "");
        if (typeof cell === "string") td.textContent = cell; else td.appendChild(cell);
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    wrap.appendChild(t);
    body.appendChild(wrap);
    return t;
  }

  function select(options, chosen, onChange) {
    var s = element("select");
    options.forEach(function (o) {
      var option = element("option", "", o.label);
      option.value = o.value;
      if (o.value === chosen) option.selected = true;
      s.appendChild(option);
    });
    s.addEventListener("change", function () { onChange(s.value); });
    return s;
  }

  // Entries of an object, most first (by `by`), ties by name: the order the report lists them in.
  function ranked(object, by) {
    return Object.keys(object || {}).map(function (k) { return [k, object[k]]; })
      .sort(function (a, b) { return by(b[1]) - by(a[1]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0); });
  }

  // ---- the request: app, range, bucket and version, kept in the address's #fragment ----

  function readFragment() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at > 0) out[decodeURIComponent(pair.slice(0, at))] = decodeURIComponent(pair.slice(at + 1));
    });
    return out;
  }

  function writeFragment(q) {
    var parts = ["app=" + encodeURIComponent(q.app), "range=" + q.range, "bucket=" + q.bucket];
    if (q.range === "custom") parts.push("from=" + q.from, "to=" + q.to);
    if (q.version) parts.push("version=" + encodeURIComponent(q.version));
    history.replaceState(null, "", "#" + parts.join("&"));
  }

  function dayInput(ms) { return new Date(ms).toISOString().slice(0, 10); }

  // The controls as a request: [from, to) aligned to whole buckets (UTC), so that the report
  // and the series cover exactly the same events.
  // [from, to) of whole buckets of `bucketMs` holding the span's events.
  function around(span, bucketMs) {
    return [Math.floor(span.first / bucketMs) * bucketMs, Math.ceil((span.last + 1) / bucketMs) * bucketMs];
  }

  // The finest bucket that cuts the span into at most READABLE_BUCKETS bars: a demo's seconds
  // of events per second, a day of them per hour.
  function dataBucket(span) {
    if (!span) return "hour";
    var names = ["second", "minute", "hour", "day"];
    for (var i = 0; i < names.length; i++) {
      var range = around(span, BUCKETS[names[i]]);
      if ((range[1] - range[0]) / BUCKETS[names[i]] <= READABLE_BUCKETS) return names[i];
    }
    return "day";
  }

  function query() {
    var bucket = BUCKETS[$("bucket").value] ? $("bucket").value : "hour";
    var bucketMs = BUCKETS[bucket];
    var range = $("range").value;
    var span = state.spans[$("app").value];
    var from, to;
    if (range === "data" && span) {
      var data = around(span, bucketMs);
      to = data[1];
      // A device clock years off can stretch the span past what the series gives at once: the
      // latest days then.
      from = state.autoBucket ? Math.max(data[0], to - MAX_BUCKETS * bucketMs) : data[0];
    } else if (range === "custom") {
      var start = Date.parse($("from").value + "T00:00:00Z");
      var end = Date.parse($("to").value + "T00:00:00Z") + DAY;
      if (!(start >= 0) || !(end > start)) return { error: "choose a start and an end day, the end not before the start" };
      from = Math.floor((state.customFrom !== undefined ? state.customFrom : start) / bucketMs) * bucketMs;
      to = Math.ceil((state.customTo !== undefined ? state.customTo : end) / bucketMs) * bucketMs;
    } else {
      to = Math.ceil(Date.now() / bucketMs) * bucketMs;
      // "its data" of an app without events (or a collector that does not say): the last week.
      from = to - Math.max(RANGES[range] || 7 * DAY, bucketMs);
    }
    if ((to - from) / bucketMs > MAX_BUCKETS) {
      return { error: "this range holds more than " + grouped(MAX_BUCKETS) + " " + bucket + "s: choose a longer bucket (per " + (bucket === "hour" ? "day" : "hour") + ")" };
    }
    return { app: $("app").value, range: range, bucket: bucket, bucketMs: bucketMs, from: from, to: to, version: $("version").value };
  }

  // ---- talking to the collector ----

  function get(path) {
    return fetch(path, { headers: { Authorization: "Bearer " + state.token }, cache: "no-store" }).then(function (response) {
      return response.text().then(function (body) {
        var json = null;
        try { json = JSON.parse(body); } catch (e) { json = null; }
        var message = json && json.error && typeof json.error.message === "string" ? json.error.message : null;
        return { ok: response.ok, status: response.status, json: response.ok ? json : null, message: message };
      });
    }, function () {
      return { ok: false, status: 0, json: null, message: "the collector cannot be reached" };
    });
  }

  function why(answer, path) {
    if (answer.ok) return null;
    if (answer.status === 404) return "this collector has no " + path;
    return (answer.status ? "HTTP " + answer.status + ": " : "") + (answer.message || "no answer");
  }

  function showLogin(message) {
    window.__state = "login";
    $("board").hidden = true;
    $("controls").hidden = true;
    $("login").hidden = false;
    $("login-error").textContent = message || "";
    $("token").value = "";
    $("token").focus();
  }

  function forget(message) {
    state.token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(message);
  }

  // Opens the board with a token: /v1/apps says whether the collector takes it.
  function open(token, typed) {
    state.token = token;
    window.__state = "signing-in";
    return get("/v1/apps").then(function (answer) {
      if (answer.status === 401 || answer.status === 403) {
        forget((typed ? "This read token was not accepted" : "The saved read token is no longer accepted") +
          " (the collector says: " + (answer.message || "HTTP " + answer.status) + ").");
        return;
      }
      if (!answer.ok || !answer.json || !Array.isArray(answer.json.apps)) {
        state.token = null;
        showLogin("The collector could not list the apps: " + why(answer, "/v1/apps") + ".");
        return;
      }
      sessionStorage.setItem(TOKEN_KEY, token);
      state.apps = answer.json.apps;
      $("login").hidden = true;
      $("login-error").textContent = "";
      $("controls").hidden = false;
      $("board").hidden = false;
      var fragment = readFragment();
      var app = $("app");
      app.textContent = "";
      state.apps.forEach(function (name) {
        var option = element("option", "", name);
        option.value = name;
        app.appendChild(option);
      });
      if (fragment.app && state.apps.indexOf(fragment.app) >= 0) app.value = fragment.app;
      if (RANGES[fragment.range] || fragment.range === "custom" || fragment.range === "data") $("range").value = fragment.range;
      if (BUCKETS[fragment.bucket]) {
        $("bucket").value = fragment.bucket;
        state.autoBucket = false;
      }
      if (fragment.range === "custom") {
        var from = Number(fragment.from), to = Number(fragment.to);
        if (from >= 0 && to > from) {
          state.customFrom = from;
          state.customTo = to;
          $("from").value = dayInput(from);
          $("to").value = dayInput(to - 1);
        }
      }
      if (fragment.version) setVersions([fragment.version], fragment.version);
      showCustom();
      if (state.apps.length === 0) {
        $("status").textContent = "This token reads no app with stored events yet.";
        drawAll(null);
        window.__state = "ready";
        window.__done = true;
        return;
      }
      return load();
    });
  }

  function setVersions(list, chosen) {
    var s = $("version");
    var names = list.slice();
    if (chosen && names.indexOf(chosen) < 0) names.push(chosen);
    s.textContent = "";
    var all = element("option", "", "all");
    all.value = "";
    s.appendChild(all);
    names.forEach(function (v) {
      var option = element("option", "", v);
      option.value = v;
      s.appendChild(option);
    });
    s.value = chosen || "";
  }

  // The app's first and last event time (GET /v1/stats), once per app, before a view of "its data".
  function loadSpan(app) {
    return get("/v1/stats?app=" + encodeURIComponent(app)).then(function (answer) {
      var stats = answer.ok ? answer.json : null;
      state.spans[app] = stats && typeof stats.first_event_ms === "number" && typeof stats.last_event_ms === "number"
        ? { first: stats.first_event_ms, last: stats.last_event_ms } : null;
    });
  }

  function load() {
    var app = $("app").value;
    if ($("range").value === "data") {
      if (!(app in state.spans)) return loadSpan(app).then(load);
      if (state.autoBucket) $("bucket").value = dataBucket(state.spans[app]);
    }
    var q = query();
    if (q.error) {
      $("status").textContent = q.error;
      return Promise.resolve();
    }
    writeFragment(q);
    var ticket = ++state.loading;
    window.__done = false;
    window.__state = "loading";
    var started = performance.now();
    $("status").textContent = "Loading " + q.app + "…";
    var filter = "app=" + encodeURIComponent(q.app) + "&from=" + q.from + "&to=" + q.to +
      (q.version ? "&app_version=" + encodeURIComponent(q.version) : "");
    var paths = {
      report: "/v1/report?" + filter,
      series: "/v1/report/series?" + filter + "&bucket=" + q.bucket,
      policy: "/v1/report/policy?app=" + encodeURIComponent(q.app),
    };
    return Promise.all([get(paths.report), get(paths.series), get(paths.policy)]).then(function (answers) {
      if (ticket !== state.loading) return;  // a newer request was made meanwhile
      if (answers.some(function (a) { return a.status === 401; })) {
        forget("The read token is no longer accepted (the collector says: " + (answers.find(function (a) { return a.status === 401; }).message || "HTTP 401") + ").");
        return;
      }
      var fetched = performance.now();
      var data = {
        query: q, paths: paths,
        report: answers[0].json, series: answers[1].json, policy: answers[2].json,
        why: { report: why(answers[0], "/v1/report"), series: why(answers[1], "/v1/report/series"), policy: why(answers[2], "/v1/report/policy") },
      };
      var versions = data.report && data.report.versions && Array.isArray(data.report.versions.app) ? data.report.versions.app : null;
      if (versions && !q.version) {
        state.versions[q.app] = versions.map(function (v) { return v.version; });
      }
      setVersions(state.versions[q.app] || [], q.version);
      drawAll(data);
      var drawn = performance.now();
      window.__timings = { fetch_ms: fetched - started, draw_ms: drawn - fetched, total_ms: drawn - started };
      window.__requests = paths;
      window.__loadMs = drawn;
      $("status").textContent = "Read in " + Math.round(fetched - started) + " ms, drawn in " + Math.round(drawn - fetched) + " ms.";
      window.__state = "ready";
      window.__done = true;
    });
  }

  // ---- the sections ----

  var SECTIONS = [
    ["overview", drawOverview], ["events", drawEvents], ["names", drawNames], ["sources", drawSources],
    ["usecases", drawUseCases], ["funnel", drawFunnel], ["network", drawNetwork], ["split", drawSplit],
    ["aggregates", drawAggregates], ["fleet", drawFleet], ["policy", drawPolicy],
  ];

  function drawAll(data) {
    state.last = data ? { report: data.report, series: data.series, policy: data.policy } : {};
    state.data = data;
    drawFilter(data);
    SECTIONS.forEach(function (section) {
      var body = document.querySelector("#" + section[0] + " .body");
      body.textContent = "";
      try {
        if (!data) noData(body, "no app to show");
        else section[1](body, data);
      } catch (error) {
        body.textContent = "";
        noData(body, "this section could not be drawn: " + error.message);
        console.error("dashboard section " + section[0] + ":", error);
      }
    });
  }

  function drawFilter(data) {
    var line = $("filter");
    line.textContent = "";
    if (!data) return;
    var q = data.query;
    var filter = data.report && data.report.filter;
    if (filter && typeof filter === "object") {
      line.appendChild(document.createTextNode("Events from "));
      line.appendChild(value(["report", "filter", "from"], "time"));
      line.appendChild(document.createTextNode(" to "));
      line.appendChild(value(["report", "filter", "to"], "time"));
      line.appendChild(document.createTextNode(" · app version "));
      line.appendChild(filter.app_version ? value(["report", "filter", "app_version"], "text") : document.createTextNode("all"));
      if (filter.dimension) {
        line.appendChild(document.createTextNode(" · dimension "));
        line.appendChild(value(["report", "filter", "dimension"], "text"));
      }
    } else {
      line.textContent = "Asked for " + FORMATS.time(q.from) + " to " + FORMATS.time(q.to) + (q.version ? " · app version " + q.version : "") +
        " (this collector's report does not say which filter it applied).";
    }
  }

  function drawOverview(body, data) {
    if (!data.report) return noData(body, data.why.report);
    var tiles = element("div", "tiles");
    tile(tiles, "events stored", ["report", "events_stored"], "count");
    tile(tiles, "point events", ["report", "point_events"], "count");
    tile(tiles, "span events", ["report", "span_events"], "count");
    tile(tiles, "sessions", ["report", "sessions", "count"], "count");
    tile(tiles, "session p50", ["report", "sessions", "p50_ms"], "ms");
    tile(tiles, "session p95", ["report", "sessions", "p95_ms"], "ms");
    body.appendChild(tiles);
  }

  function drawEvents(body, data) {
    var series = data.series;
    if (!series) return noData(body, data.why.series);
    if (!Array.isArray(series.points) || series.points.length === 0) return noData(body, "no events in this range");
    var per = series.bucket === "day" ? "day" : "hour";
    NFCharts.timeBars(body, {
      chart: "events", from: series.from, to: series.to, bucketMs: series.bucket_ms, format: FORMATS.count,
      points: series.points.map(function (p) {
        return { start: p.start, value: p.events, overlay: p.web_events,
                 title: FORMATS.time(p.start) + ": " + FORMATS.count(p.events) + " events (" + FORMATS.count(p.web_events) + " web)" };
      }),
    });
    NFCharts.legend(body, [{ cls: "bar", label: "events per " + per }, { cls: "overlay", label: "of which web" }]);
  }

  function drawNames(body, data) {
    if (!data.report) return noData(body, data.why.report);
    var names = ranked(data.report.events_by_name, function (n) { return n; });
    if (names.length === 0) return noData(body, "no events stored");
    var shown = names.slice(0, TOP_NAMES);
    NFCharts.rows(body, {
      chart: "names", format: FORMATS.count, formatName: "count",
      rows: shown.map(function (e) { return { label: e[0], value: e[1], key: ["report", "events_by_name", e[0]], title: e[0] + ": " + FORMATS.count(e[1]) }; }),
    });
    if (names.length > shown.length) note(body, "The " + shown.length + " most frequent of " + grouped(names.length) + " names.");
  }

  function drawSources(body, data) {
    var report = data.report;
    if (!report) return noData(body, data.why.report);
    var sources = report.events_by_source;
    if (!sources || !(sources.native > 0 || sources.web > 0)) return noData(body, sources ? "no events stored" : "this report has no events_by_source");
    NFCharts.stacks(body, {
      chart: "sources",
      rows: [{ label: "", parts: [
        { cls: "native", value: sources.native, title: "native: " + FORMATS.count(sources.native) },
        { cls: "web", value: sources.web, title: "web: " + FORMATS.count(sources.web) },
      ] }],
    });
    var tiles = element("div", "tiles");
    tile(tiles, "native (the app's code)", ["report", "events_by_source", "native"], "count").classList.add("native");
    tile(tiles, "web (through the bridge)", ["report", "events_by_source", "web"], "count").classList.add("web");
    tile(tiles, "web origins", ["report", "web_origins"], "count");
    body.appendChild(tiles);
  }

  function useCasesRanked(report) {
    return ranked(report && report.use_cases, function (u) { return u.started; });
  }

  function drawUseCases(body, data) {
    var report = data.report;
    if (!report) return noData(body, data.why.report);
    var cases = useCasesRanked(report);
    if (cases.length === 0) return noData(body, "no use case spans (type usecase) in this range");
    var rated = cases.slice(0, TOP_RATES);
    var chart = body.appendChild(element("div", "chart-box"));
    chart.appendChild(element("h3", "", "Abandonment rate, most started"));
    NFCharts.rows(chart, {
      chart: "abandonment", format: FORMATS.rate, formatName: "rate",
      rows: rated.map(function (e) {
        return { label: e[0], value: e[1].abandonment_rate, key: ["report", "use_cases", e[0], "abandonment_rate"],
                 title: e[0] + ": " + FORMATS.rate(e[1].abandonment_rate) + " of " + FORMATS.count(e[1].started) + " abandoned" };
      }),
    });
    var shown = state.showAllUseCases ? cases : cases.slice(0, TOP_USE_CASES);
    table(body, [
      { label: "Use case" }, { label: "Started", numeric: true }, { label: "Completed", numeric: true },
      { label: "Abandoned", numeric: true }, { label: "Abandonment", numeric: true },
      { label: "Time to complete p50", numeric: true }, { label: "p95", numeric: true },
    ], shown.map(function (e) {
      var base = ["report", "use_cases", e[0]];
      return [e[0], value(base.concat("started"), "count"), value(base.concat("completed"), "count"), value(base.concat("abandoned"), "count"),
        value(base.concat("abandonment_rate"), "rate"), value(base.concat("duration", "p50_ms"), "ms"), value(base.concat("duration", "p95_ms"), "ms")];
    }));
    if (cases.length > TOP_USE_CASES) {
      var more = element("button", "quiet", state.showAllUseCases ? "Show the " + TOP_USE_CASES + " most started" : "Show all " + grouped(cases.length));
      more.type = "button";
      more.addEventListener("click", function () { state.showAllUseCases = !state.showAllUseCases; redraw("usecases"); });
      body.appendChild(more);
    }
    omitted(body, "Less started use cases not in the report", ["report", "use_cases_omitted"]);
  }

  function drawFunnel(body, data) {
    var report = data.report;
    if (!report) return noData(body, data.why.report);
    var cases = useCasesRanked(report);
    if (cases.length === 0) return noData(body, "no use cases in this range");
    if (!cases.some(function (e) { return Array.isArray(e[1].steps); })) return noData(body, "this collector's report has no steps");
    var withSteps = cases.filter(function (e) { return Array.isArray(e[1].steps) && e[1].steps.length > 0; });
    if (withSteps.length === 0) return noData(body, "no events logged against a use case in this range");
    var names = withSteps.map(function (e) { return e[0]; });
    // At first, the most started use case that users abandoned: where they leave is the question.
    var left = withSteps.filter(function (e) { return e[1].abandoned > 0; });
    var chosen = names.indexOf(state.funnel) >= 0 ? state.funnel : (left.length ? left[0][0] : names[0]);
    var picker = element("label", "picker", "Use case ");
    picker.appendChild(select(names.map(function (n) { return { value: n, label: n }; }), chosen, function (v) { state.funnel = v; redraw("funnel"); }));
    body.appendChild(picker);
    var useCase = report.use_cases[chosen];
    var base = ["report", "use_cases", chosen];
    var tiles = element("div", "tiles");
    tile(tiles, "started", base.concat("started"), "count");
    tile(tiles, "abandoned", base.concat("abandoned"), "count");
    tile(tiles, "left before the first step", base.concat("left_before_first_step"), "count");
    body.appendChild(tiles);
    NFCharts.rows(body, {
      chart: "funnel", format: FORMATS.count, formatName: "count", second: true,
      rows: useCase.steps.map(function (s, i) {
        return { label: s.name, value: s.reached, second: s.left, key: ["report", "use_cases", chosen, "steps", i, "reached"],
                 title: s.name + ": reached in " + FORMATS.count(s.reached) + " runs", secondTitle: s.name + ": the last step of " + FORMATS.count(s.left) + " abandoned runs" };
      }),
    });
    NFCharts.legend(body, [{ cls: "bar", label: "runs that reached the step" }, { cls: "left", label: "abandoned runs whose last step it was" }]);
    table(body, [{ label: "Step" }, { label: "Reached", numeric: true }, { label: "Left here", numeric: true }], useCase.steps.map(function (s, i) {
      var step = base.concat("steps", i);
      return [s.name, value(step.concat("reached"), "count"), value(step.concat("left"), "count")];
    })).classList.add("compact");
    omitted(body, "Less reached steps not listed", base.concat("steps_omitted"));
  }

  function drawNetwork(body, data) {
    if (data.report && data.report.network) {
      var tiles = element("div", "tiles");
      tile(tiles, "network calls", ["report", "network", "count"], "count");
      tile(tiles, "round trip p50", ["report", "network", "p50_ms"], "ms");
      tile(tiles, "round trip p95", ["report", "network", "p95_ms"], "ms");
      body.appendChild(tiles);
    }
    var series = data.series;
    if (!series) return noData(body, data.why.series);
    var points = (series.points || []).filter(function (p) { return p.network && p.network.count > 0; });
    if (points.length === 0) return noData(body, "no network spans in this range");
    function line(name, key, cls) {
      return { name: name, cls: cls, points: points.map(function (p) {
        return { start: p.start, value: p.network[key], title: FORMATS.time(p.start) + ": " + name + " " + FORMATS.ms(p.network[key]) + " (n=" + FORMATS.count(p.network.count) + ")" };
      }).filter(function (p) { return typeof p.value === "number"; }) };
    }
    NFCharts.timeLines(body, { chart: "network", from: series.from, to: series.to, bucketMs: series.bucket_ms, format: FORMATS.ms,
                               series: [line("p50", "p50_ms", "p50"), line("p95", "p95_ms", "p95")] });
    NFCharts.legend(body, [{ cls: "p50", label: "p50 per " + series.bucket }, { cls: "p95", label: "p95 per " + series.bucket }]);
  }

  function drawSplit(body, data) {
    var report = data.report;
    if (!report) return noData(body, data.why.report);
    var cases = useCasesRanked(report).filter(function (e) { return e[1].server; });
    if (cases.length === 0) return noData(body, "no use case whose transactions reached a backend that logged");
    NFCharts.stacks(body, {
      chart: "split",
      rows: cases.map(function (e) {
        var s = e[1].server;
        function part(name) { return { cls: name, value: s[name].p50_ms, title: e[0] + ": " + name + " p50 " + FORMATS.ms(s[name].p50_ms) }; }
        return { label: e[0], parts: [part("client"), part("network"), part("server")] };
      }),
    });
    NFCharts.legend(body, [{ cls: "client", label: "in the app (p50)" }, { cls: "network", label: "on the network (p50)" }, { cls: "server", label: "on the server (p50)" }]);
    table(body, [
      { label: "Use case" }, { label: "Transactions", numeric: true },
      { label: "Client p50", numeric: true }, { label: "p95", numeric: true },
      { label: "Network p50", numeric: true }, { label: "p95", numeric: true },
      { label: "Server p50", numeric: true }, { label: "p95", numeric: true },
    ], cases.map(function (e) {
      var base = ["report", "use_cases", e[0], "server"];
      return [e[0], value(base.concat("transactions"), "count"),
        value(base.concat("client", "p50_ms"), "ms"), value(base.concat("client", "p95_ms"), "ms"),
        value(base.concat("network", "p50_ms"), "ms"), value(base.concat("network", "p95_ms"), "ms"),
        value(base.concat("server", "p50_ms"), "ms"), value(base.concat("server", "p95_ms"), "ms")];
    }));
  }

  function drawAggregates(body, data) {
    var report = data.report;
    var series = data.series;
    var names = ranked(report && report.aggregates, function (a) { return a.count; });
    var overTime = series && series.aggregates && typeof series.aggregates === "object" ? series.aggregates : null;
    var choices = [];
    ranked(overTime, function (m) { return 0; }).forEach(function (e) {
      Object.keys(e[1]).sort().forEach(function (measure) { choices.push({ value: JSON.stringify([e[0], measure]), label: e[0] + " · " + measure }); });
    });
    if (names.length === 0 && choices.length === 0) {
      return noData(body, report ? "no aggregates in this range" : data.why.report);
    }
    if (choices.length > 0) {
      var chosen = choices.some(function (c) { return c.value === state.measure; }) ? state.measure : choices[0].value;
      var picked = JSON.parse(chosen);
      var picker = element("label", "picker", "Measure ");
      picker.appendChild(select(choices, chosen, function (v) { state.measure = v; redraw("aggregates"); }));
      body.appendChild(picker);
      var points = overTime[picked[0]][picked[1]] || [];
      var box = body.appendChild(element("div", "chart-box"));
      box.appendChild(element("h3", "", "Values per " + series.bucket));
      NFCharts.timeBars(box, {
        chart: "aggregate-count", from: series.from, to: series.to, bucketMs: series.bucket_ms, format: FORMATS.count, height: 120,
        points: points.map(function (p) { return { start: p.start, value: p.count, overlay: 0, title: FORMATS.time(p.start) + ": " + FORMATS.count(p.count) + " values" }; }),
      });
      function line(key, cls) {
        return { name: key, cls: cls, points: points.filter(function (p) { return typeof p[key] === "number"; }).map(function (p) {
          return { start: p.start, value: p[key], title: FORMATS.time(p.start) + ": " + key + " " + FORMATS.number(p[key]) };
        }) };
      }
      var values = body.appendChild(element("div", "chart-box"));
      values.appendChild(element("h3", "", "Mean and percentiles"));
      NFCharts.timeLines(values, { chart: "aggregate-values", from: series.from, to: series.to, bucketMs: series.bucket_ms, format: FORMATS.number,
                                   series: [line("mean", "mean"), line("p50", "p50"), line("p95", "p95"), line("p99", "p99")] });
      NFCharts.legend(values, [{ cls: "mean", label: "mean" }, { cls: "p50", label: "p50" }, { cls: "p95", label: "p95" }, { cls: "p99", label: "p99" }]);
      omitted(body, "Aggregated names over time not listed", ["series", "aggregates_omitted"]);
    } else {
      noData(body, series ? "no aggregates over time in this range" : data.why.series);
    }
    if (names.length === 0) return;
    var rows = [];
    names.slice(0, TOP_AGGREGATES).forEach(function (e) {
      var measures = Object.keys(e[1].measures || {}).sort();
      if (measures.length === 0) measures = [null];
      measures.forEach(function (measure) {
        var base = ["report", "aggregates", e[0]];
        var m = base.concat("measures", measure);
        rows.push([e[0], measure === null ? "—" : measure, value(base.concat("records"), "count"), value(base.concat("count"), "count"),
          measure === null ? "—" : value(m.concat("count"), "count"), measure === null ? "—" : value(m.concat("mean"), "number"),
          measure === null ? "—" : value(m.concat("p50"), "number"), measure === null ? "—" : value(m.concat("p95"), "number"),
          measure === null ? "—" : value(m.concat("p99"), "number")]);
      });
    });
    table(body, [
      { label: "Name" }, { label: "Measure" }, { label: "Aggregates", numeric: true }, { label: "Events", numeric: true },
      { label: "Values", numeric: true }, { label: "Mean", numeric: true }, { label: "p50", numeric: true },
      { label: "p95", numeric: true }, { label: "p99", numeric: true },
    ], rows);
    omitted(body, "Aggregated names with fewer events not listed", ["report", "aggregates_omitted"]);
  }

  function drawFleet(body, data) {
    var report = data.report;
    if (!report) return noData(body, data.why.report);
    var tiles = element("div", "tiles");
    tile(tiles, "events pruned on devices", ["report", "pruned_on_devices"], "count");
    tile(tiles, "abandoned spans", ["report", "abandoned_spans"], "count");
    tile(tiles, "database resets", ["report", "database_resets"], "count");
    tile(tiles, "events quarantined on devices", ["report", "quarantined_on_devices"], "count");
    tile(tiles, "duplicates dropped", ["report", "duplicates_dropped"], "count");
    tile(tiles, "batches", ["report", "batches"], "count");
    body.appendChild(tiles);
    var versions = report.versions;
    var columns = element("div", "columns");
    var apps = element("div");
    apps.appendChild(element("h3", "", "App versions"));
    if (!versions || !Array.isArray(versions.app)) noData(apps, "this collector's report has no versions");
    else if (versions.app.length === 0) noData(apps, "no events in this range");
    else table(apps, [{ label: "Version" }, { label: "Events", numeric: true }], versions.app.map(function (v, i) {
      return [value(["report", "versions", "app", i, "version"], "text"), value(["report", "versions", "app", i, "events"], "count")];
    })).classList.add("compact");
    columns.appendChild(apps);
    var sdks = element("div");
    sdks.appendChild(element("h3", "", "SDK versions"));
    if (!versions || !Array.isArray(versions.sdk)) noData(sdks, "this collector's report has no versions");
    else if (versions.sdk.length === 0) noData(sdks, "no events in this range");
    else table(sdks, [{ label: "SDK" }, { label: "Version" }, { label: "Events", numeric: true }], versions.sdk.map(function (v, i) {
      var base = ["report", "versions", "sdk", i];
      return [value(base.concat("name"), "text"), value(base.concat("version"), "text"), value(base.concat("events"), "count")];
    })).classList.add("compact");
    columns.appendChild(sdks);
    body.appendChild(columns);
    note(body, "Pruned and quarantined events, database resets, duplicates and batches are the app's totals, whatever the range and version.");
  }

  function drawPolicy(body, data) {
    var policy = data.policy;
    if (!policy) return noData(body, data.why.policy);
    if (policy.policy === null || policy.policy === undefined) return noData(body, "the collector serves no policy for this app");
    var facts = element("dl", "facts");
    facts.appendChild(element("dt", "", "ETag"));
    facts.appendChild(value(["policy", "etag"], "text", "dd"));
    facts.appendChild(element("dt", "", "Changed"));
    facts.appendChild(value(["policy", "changed_ms"], "time", "dd"));
    body.appendChild(facts);
    body.appendChild(element("pre", "policy-json", JSON.stringify(policy.policy, null, 2)));
    note(body, "Read-only: the operator edits the policy files the collector serves (serve --policies DIR).");
  }

  function redraw(id) {
    if (!state.data) return;
    SECTIONS.forEach(function (section) {
      if (id && section[0] !== id) return;
      var body = document.querySelector("#" + section[0] + " .body");
      body.textContent = "";
      section[1](body, state.data);
    });
  }

  function showCustom() {
    var custom = $("range").value === "custom";
    document.querySelectorAll(".custom").forEach(function (e) { e.hidden = !custom; });
    if (custom && !$("from").value) {
      var today = Math.floor(Date.now() / DAY) * DAY;
      $("from").value = dayInput(today - 6 * DAY);
      $("to").value = dayInput(today);
    }
  }

  // ---- wiring ----

  document.addEventListener("DOMContentLoaded", function () {
    $("login-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var token = $("token").value.trim();
      if (!token) return;
      $("login-error").textContent = "";
      open(token, true);
    });
    $("controls").addEventListener("submit", function (event) {
      event.preventDefault();
      load();
    });
    $("signout").addEventListener("click", function () { forget("The token was forgotten."); });
    $("app").addEventListener("change", function () {
      setVersions(state.versions[$("app").value] || [], "");
      state.funnel = null;
      state.measure = null;
      if ($("range").value === "data") state.autoBucket = true;
      load();
    });
    $("range").addEventListener("change", function () {
      var range = $("range").value;
      state.autoBucket = range === "data";
      if (range !== "data") $("bucket").value = range === "30d" || range === "90d" ? "day" : range === "custom" ? $("bucket").value : "hour";
      showCustom();
      if (range !== "custom") load();
    });
    ["from", "to"].forEach(function (id) {
      $(id).addEventListener("change", function () { state.customFrom = undefined; state.customTo = undefined; });
    });
    $("bucket").addEventListener("change", function () { state.autoBucket = false; load(); });
    $("version").addEventListener("change", function () { load(); });
    var resizing = null;
    window.addEventListener("resize", function () {
      clearTimeout(resizing);
      resizing = setTimeout(function () { redraw(null); }, 150);
    });
    var saved = sessionStorage.getItem(TOKEN_KEY);
    if (saved) open(saved, false);
    else showLogin("");
  });
})();
