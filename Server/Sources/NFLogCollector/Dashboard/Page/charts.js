// The dashboard's charts: small SVG drawings of numbers the collector computed. They lay out and
// draw; they compute nothing from the data but positions. Every mark (a bar, a point) has the
// class "mark" and a <title> with its value, so a reader hovering it, and a test counting marks,
// see exactly what was drawn. Text goes in with textContent only: names come from devices.
"use strict";

var NFCharts = (function () {
  var SVG = "http://www.w3.org/2000/svg";
  var HOUR = 3600000;
  var PAD = { left: 56, right: 12, top: 10, bottom: 24 };

  function node(name, attributes, parent) {
    var element = document.createElementNS(SVG, name);
    Object.keys(attributes || {}).forEach(function (key) { element.setAttribute(key, String(attributes[key])); });
    if (parent) parent.appendChild(element);
    return element;
  }

  function label(parent, x, y, content, anchor, cls) {
    var text = node("text", { x: x, y: y, "text-anchor": anchor || "start", "class": cls || "axis" }, parent);
    text.textContent = content;
    return text;
  }

  function title(parent, content) {
    node("title", {}, parent).textContent = content;
  }

  // The top of the scale: the smallest 1, 2 or 5 × 10^k at or above the largest value.
  function niceMax(value) {
    if (!(value > 0)) return 1;
    var power = Math.pow(10, Math.floor(Math.log10(value)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) {
      if (steps[i] * power >= value) return steps[i] * power;
    }
    return 10 * power;
  }

  function svg(container, chart, height) {
    var width = Math.max(280, Math.floor(container.clientWidth || 600));
    var root = node("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img", "data-chart": chart, "class": "chart" });
    container.appendChild(root);
    return { root: root, width: width, height: height };
  }

  // A tick's time, as fine as the buckets: seconds, minutes, or days.
  function utc(ms, bucketMs) {
    var iso = new Date(ms).toISOString();
    if (bucketMs < 60000) return iso.slice(11, 19);
    return bucketMs < 24 * HOUR ? iso.slice(5, 10) + " " + iso.slice(11, 16) : iso.slice(0, 10);
  }

  // A time axis over [from, to) and a value axis from 0 to `top`.
  function axes(canvas, from, to, bucketMs, top, format) {
    var plot = { x: PAD.left, y: PAD.top, w: canvas.width - PAD.left - PAD.right, h: canvas.height - PAD.top - PAD.bottom };
    var grid = node("g", { "class": "grid" }, canvas.root);
    [0, 0.5, 1].forEach(function (share) {
      var y = plot.y + plot.h - share * plot.h;
      node("line", { x1: plot.x, x2: plot.x + plot.w, y1: y, y2: y }, grid);
      label(canvas.root, plot.x - 6, y + 4, format(top * share), "end");
    });
    var ticks = Math.max(2, Math.min(6, Math.floor(plot.w / 110)));
    var span = to - from;
    for (var i = 0; i <= ticks; i++) {
      var at = from + Math.round((span * i) / ticks / bucketMs) * bucketMs;
      var x = plot.x + ((at - from) / span) * plot.w;
      var anchor = i === 0 ? "start" : i === ticks ? "end" : "middle";
      label(canvas.root, x, canvas.height - 6, utc(at, bucketMs), anchor);
    }
    return plot;
  }

  // One bar per point over time: points [{start, value, overlay, title}], overlay drawn inside
  // its bar (the web share of the events), from [from, to) in buckets of bucketMs.
  function timeBars(container, options) {
    var canvas = svg(container, options.chart, options.height || 200);
    var top = niceMax(Math.max.apply(null, options.points.map(function (p) { return p.value; }).concat([0])));
    var plot = axes(canvas, options.from, options.to, options.bucketMs, top, options.format);
    var span = options.to - options.from;
    var width = Math.max(1, (options.bucketMs / span) * plot.w - (plot.w / (span / options.bucketMs) > 4 ? 1 : 0));
    options.points.forEach(function (point) {
      var x = plot.x + ((point.start - options.from) / span) * plot.w;
      var h = (point.value / top) * plot.h;
      var bar = node("rect", { x: x, y: plot.y + plot.h - h, width: width, height: h, "class": "mark bar" }, canvas.root);
      title(bar, point.title);
      if (point.overlay > 0) {
        var o = (point.overlay / top) * plot.h;
        node("rect", { x: x, y: plot.y + plot.h - o, width: width, height: o, "class": "overlay" }, canvas.root);
      }
    });
    return canvas.root;
  }

  // Lines over time, one per series [{name, cls, points: [{start, value, title}]}], a point
  // (a mark) at each value, in the middle of its bucket.
  function timeLines(container, options) {
    var canvas = svg(container, options.chart, options.height || 220);
    var values = [0];
    options.series.forEach(function (s) { s.points.forEach(function (p) { values.push(p.value); }); });
    var top = niceMax(Math.max.apply(null, values));
    var plot = axes(canvas, options.from, options.to, options.bucketMs, top, options.format);
    var span = options.to - options.from;
    options.series.forEach(function (series) {
      var group = node("g", { "class": "series " + series.cls, "data-series": series.name }, canvas.root);
      var coordinates = series.points.map(function (p) {
        return [plot.x + ((p.start + options.bucketMs / 2 - options.from) / span) * plot.w, plot.y + plot.h - (p.value / top) * plot.h];
      });
      if (coordinates.length > 1) {
        node("path", { d: coordinates.map(function (c, i) { return (i ? "L" : "M") + c[0].toFixed(1) + "," + c[1].toFixed(1); }).join(" "), "class": "line" }, group);
      }
      coordinates.forEach(function (c, i) {
        title(node("circle", { cx: c[0], cy: c[1], r: 3, "class": "mark dot" }, group), series.points[i].title);
      });
    });
    return canvas.root;
  }

  // Horizontal bars, one row each [{label, value, title, key, second, secondTitle}], in the order
  // given; `second` (users who left at the step) is drawn below the first, on the same scale;
  // `key` (the value's path in the answer) marks the value's label as dashboard.js marks values.
  function rows(container, options) {
    var rowHeight = options.second ? 30 : 22;
    var canvas = svg(container, options.chart, rowHeight * options.rows.length + 8);
    var labelWidth = Math.min(220, Math.floor(canvas.width * 0.4));
    var valueWidth = 70;
    var barSpace = Math.max(20, canvas.width - labelWidth - valueWidth - 8);
    var top = Math.max.apply(null, options.rows.map(function (r) { return r.value; }).concat([0])) || 1;
    var characters = Math.max(6, Math.floor(labelWidth / 7));
    options.rows.forEach(function (row, index) {
      var y = 4 + index * rowHeight;
      var name = row.label.length > characters ? row.label.slice(0, characters - 1) + "…" : row.label;
      title(label(canvas.root, labelWidth - 6, y + 13, name, "end", "row-label"), row.label);
      var w = Math.max(1, (row.value / top) * barSpace);
      title(node("rect", { x: labelWidth, y: y + 3, width: w, height: 13, "class": "mark bar" }, canvas.root), row.title);
      var shown = label(canvas.root, labelWidth + w + 4, y + 13, options.format(row.value), "start", "row-value");
      if (row.key) {
        // The value as the page shows every value: its path in the answer, to check it against.
        shown.setAttribute("data-key", JSON.stringify(row.key));
        shown.setAttribute("data-format", options.formatName);
      }
      if (options.second) {
        var s = Math.max(row.second > 0 ? 1 : 0, (row.second / top) * barSpace);
        title(node("rect", { x: labelWidth, y: y + 18, width: s, height: 7, "class": "left" }, canvas.root), row.secondTitle);
      }
    });
    return canvas.root;
  }

  // One bar of parts side by side [{label, value, cls, title}] per row [{label, parts}]: the
  // native and web events; a use case's client, network and server time.
  function stacks(container, options) {
    var canvas = svg(container, options.chart, 26 * options.rows.length + 8);
    var labelWidth = options.rows.some(function (r) { return r.label; }) ? Math.min(200, Math.floor(canvas.width * 0.35)) : 0;
    var space = canvas.width - labelWidth - 4;
    var characters = Math.max(6, Math.floor(labelWidth / 7));
    options.rows.forEach(function (row, index) {
      var y = 4 + index * 26;
      if (labelWidth) {
        var name = row.label.length > characters ? row.label.slice(0, characters - 1) + "…" : row.label;
        title(label(canvas.root, labelWidth - 6, y + 14, name, "end", "row-label"), row.label);
      }
      var total = row.parts.reduce(function (sum, p) { return sum + (p.value > 0 ? p.value : 0); }, 0) || 1;
      var x = labelWidth;
      row.parts.forEach(function (part) {
        var w = ((part.value > 0 ? part.value : 0) / total) * space;
        title(node("rect", { x: x, y: y, width: w, height: 18, "class": "mark part " + part.cls }, canvas.root), part.title);
        x += w;
      });
    });
    return canvas.root;
  }

  // A legend: swatches and names, in HTML.
  function legend(container, items) {
    var list = document.createElement("ul");
    list.className = "legend";
    items.forEach(function (item) {
      var entry = document.createElement("li");
      var swatch = document.createElement("span");
      swatch.className = "swatch " + item.cls;
      entry.appendChild(swatch);
      entry.appendChild(document.createTextNode(item.label));
      list.appendChild(entry);
    });
    container.appendChild(list);
    return list;
  }

  return { timeBars: timeBars, timeLines: timeLines, rows: rows, stacks: stacks, legend: legend, niceMax: niceMax };
})();
