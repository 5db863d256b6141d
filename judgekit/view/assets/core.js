/* judgekit view, part 1 of 5: data access, DOM helpers, value formats and order, the summary.
   Every string from a run (model output, item ids, file names) goes into the page as a text
   node (el(..., {text}) or textContent): never as HTML. */
"use strict";
var DATA = null;

/* The run data: JSON in #judgekit-data or, in a large report, that JSON gzip-compressed and
   base64-encoded (data-encoding="gzip+base64", judgekit/view/page.py), inflated by the
   browser's own DecompressionStream (no library, no network). then() runs once DATA is set:
   at once for plain JSON. A large report keeps the bulk (raw answers, keys, reasons, item
   texts) apart in script.judgekit-bulk parts: then() runs on the rest, and JK.bulk is the
   promise of the bulk's arrival (DATA.bulk is true until then; search, picking a record, details and compare
   mode wait for it). */
function loadData(then) {
  JK.started = performance.now();
  var node = document.getElementById("judgekit-data");
  if (node.dataset.encoding !== "gzip+base64") { DATA = JSON.parse(node.textContent); then(); return; }
  if (typeof DecompressionStream === "undefined") {
    failed("this browser cannot inflate the report's data (it has no DecompressionStream): open the file in a current Chromium, Firefox or Safari");
    return;
  }
  var parts = document.querySelectorAll("script.judgekit-bulk");
  inflate(node).then(function (data) {
    DATA = data;
    if (parts.length) JK.bulk = new Promise(function (done) {
      var k = 0;
      function next() {  // one part a task: a click is handled between two parts
        if (k === parts.length) { DATA.bulk = false; done(); return; }
        inflate(parts[k++]).then(function (part) { addPart(part); setTimeout(next, 0); });
      }
      setTimeout(next, 0);  // once the first view is drawn: it never waits for the bulk
    });
    then();
  }, function (err) { failed("the report's data could not be inflated (" + err + "): the file is damaged; build it again"); });
}

function addPart(part) {  // rows [start, start + n) of text columns, or item texts
  var run = DATA.runs[part.run];
  if (part.items) { run.extras.items = Object.assign(run.extras.items || {}, part.items); return; }
  Object.keys(part.text).forEach(function (k) {
    var col = run.rows.text[k] || (run.rows.text[k] = new Array(run.rows.n));
    part.text[k].forEach(function (v, j) { col[part.start + j] = v; });
  });
}

function inflate(node) {  // a promise of the JSON value that node holds gzip + base64
  var text = node.textContent.trim(), bytes;
  if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(text);
  else {
    var bin = atob(text);
    bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  }
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text()
    .then(function (json) { return JSON.parse(json); });
}

function failed(message) {
  document.getElementById("tab-summary").appendChild(el("p", { cls: "warn", text: message }));
  document.documentElement.dataset.ready = "failed";
}
var JK = { tables: [], state: null };

function el(tag, props, children) {
  var node = document.createElement(tag);
  props = props || {};
  Object.keys(props).forEach(function (k) {
    var v = props[k];
    if (v === undefined || v === null) return;
    if (k === "text") node.textContent = String(v);
    else if (k === "cls") node.className = v;
    else if (k === "data") Object.keys(v).forEach(function (d) { node.dataset[d] = String(v[d]); });
    else if (k === "on") Object.keys(v).forEach(function (ev) { node.addEventListener(ev, v[ev]); });
    else node.setAttribute(k, String(v));
  });
  (children || []).forEach(function (c) {
    if (c === null || c === undefined) return;
    node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  });
  return node;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

function fmt(v) {
  if (v === null || v === undefined) return "\u2013";
  if (typeof v === "number") {
    if (Number.isInteger(v)) return String(v);
    var a = Math.abs(v);
    return (a !== 0 && (a < 1e-3 || a >= 1e6)) ? v.toPrecision(4) : v.toFixed(4);
  }
  if (typeof v === "boolean") return v ? "true" : "false";
  return String(v);
}

function fmtCI(est) {
  if (!est) return "\u2013";
  var s = fmt(est.value);
  if (est.ci) s += " [" + fmt(est.ci[0]) + ", " + fmt(est.ci[1]) + "]";
  return s;
}

function words(name) { return String(name).replace(/_/g, " "); }

/* A summary value in words: a list as "a, b", a mapping as "key value, key value", an empty
   one as "none"; never as JSON. */
function fmtValue(v) {
  if (Array.isArray(v)) return v.length ? v.map(function (x) { return fmtInner(x); }).join(", ") : "none";
  if (v !== null && typeof v === "object") {
    var keys = Object.keys(v);
    if (!keys.length) return "none";
    if (keys.length === 2 && "value" in v && "ci" in v) return fmtCI(v);
    return keys.map(function (k) { return words(k) + " " + fmtInner(v[k]); }).join(", ");
  }
  return fmt(v);
}
function fmtInner(v) { return v !== null && typeof v === "object" ? "(" + fmtValue(v) + ")" : fmt(v); }

function plural(n, word, many) { return n.toLocaleString("en") + " " + (n === 1 ? word : many || word + "s"); }

/* Display order (judgekit/view/order.py): ids with numbers as numbers (2 before 10), labels of
   a known ordinal scale (MQM severities) in the scale's order, null first. */
var COLLATE = new Intl.Collator("en", { numeric: true, sensitivity: "base" });
var SCALES = [["no errors", "no-error", "minor", "major", "critical"]];
function compareValues(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : 1;
  for (var s = 0; s < SCALES.length; s++) {
    var x = SCALES[s].indexOf(String(a)), y = SCALES[s].indexOf(String(b));
    if (x >= 0 && y >= 0) return x - y;
  }
  return COLLATE.compare(String(a), String(b)) || (String(a) < String(b) ? -1 : 1);
}

/* Long text (a 10 MB answer) is cut at LONG characters behind a "show all" button, which puts
   the whole text in a read-only text box (a browser lays out megabytes there in seconds, in a
   wrapped <pre> in minutes). */
var LONG = 20000;
function longText(tag, text, cls) {
  text = text === null || text === undefined ? "" : String(text);
  var node = el(tag, { cls: cls, dir: "auto", text: text.length > LONG ? text.slice(0, LONG) : text });
  if (text.length <= LONG) return node;
  var box = el("div", { cls: "long" }, [node]);
  var note = el("p", { cls: "muted", text: "the first " + plural(LONG, "character") + " of " + text.length.toLocaleString("en") + " " }, [
    el("button", { cls: "link show-all", text: "show all (" + plural(text.length, "character") + ")", on: { click: function () {
      // dir="auto" would scan the whole text (minutes for 10 MB): the cut text's direction
      var all = el("textarea", { cls: cls + " all", dir: getComputedStyle(node).direction, readonly: "", rows: "18",
        "aria-label": "the whole text" });
      all.value = text;
      clear(box).appendChild(all);
    } } })]);
  box.appendChild(note);
  return box;
}

/* One run's records, column-wise (see judgekit/view/rows.py). */
function Table(rows) {
  this.rows = rows;
  this.n = rows.n;
  this.hay = null;
}
Table.prototype.cat = function (name, i) { var c = this.rows.cat[name]; return c.v[c.c ? c.c[i] : 0]; };
Table.prototype.codes = function (name) {  // a one-value column comes without codes: all 0
  var c = this.rows.cat[name];
  if (!c.c) c.c = new Int32Array(this.n);
  return c.c;
};
Table.prototype.values = function (name) { return this.rows.cat[name].v; };
Table.prototype.num = function (name, i) { var c = this.rows.num[name]; return typeof c === "number" ? c : c[i]; };
Table.prototype.numbers = function (name) {
  var c = this.rows.num[name];
  if (typeof c === "number") c = this.rows.num[name] = new Float64Array(this.n).fill(c);
  return c;
};
Table.prototype.text = function (name, i) { return this.rows.text[name][i]; };
Table.prototype.parsed = function (i) {
  if (this.num("parsed_is_raw", i)) return JSON.parse(this.rows.text.raw[i]);
  var got = this.rows.parsed[String(i)];  // only rows with an answer that is not their raw JSON
  return got === undefined ? null : got;
};
Table.prototype.labelProbs = function (i) {  // "label p · label p", most probable first; or undefined
  var got = (this.rows.label_probs || {})[String(i)];
  if (!got) return undefined;
  return Object.keys(got).sort(function (a, b) { return got[b] - got[a] || compareValues(a, b); })
    .map(function (k) { return k + " " + fmt(got[k]); }).join(" \u00b7 ");
};
Table.prototype.meta = function (i) {  // the rest of a record's metadata, column-wise in the data
  var m = this.rows.meta, out = {};
  if (!this.absent) {
    this.absent = {};
    m.names.forEach(function (n) { this.absent[n] = new Set(m.cols[n].absent || []); }, this);
  }
  m.names.forEach(function (n) { if (!this.absent[n].has(i)) out[n] = m.cols[n].v[i]; }, this);
  return out;
};
Table.prototype.haystack = function () {
  if (this.hay) return this.hay;
  var t = this.rows.text, hay = new Array(this.n);
  for (var i = 0; i < this.n; i++) {
    hay[i] = (t.item[i] + "\n" + t.key[i] + "\n" + (t.reason[i] || "") + "\n" + (t.raw[i] || "") +
      "\n" + (this.cat("label", i) || "") + "\n" + (this.cat("model", i) || "")).toLowerCase();
  }
  this.hay = hay;
  return hay;
};
Table.prototype.find = function (field, value) {
  var col = this.rows.text[field];
  for (var i = 0; i < this.n; i++) if (col[i] === value) return i;
  return -1;
};

function table(run) {
  if (!JK.tables[run]) JK.tables[run] = new Table(DATA.runs[run].rows);
  return JK.tables[run];
}

/* [name, value, path (in summary.json, or a name for tests), [low, high] (a CI), the CI's paths]
   rows. */
function kvTable(pairs) {
  var body = el("tbody");
  pairs.forEach(function (p) {
    if (p[1] === undefined) return;
    var value = p[1], ci = p[3];
    var text = fmtValue(value) + (ci ? " [" + fmt(ci[0]) + ", " + fmt(ci[1]) + "]" : "");
    var cell = el("td", { text: text, cls: typeof value === "number" ? "num" : "" });
    if (p[2]) {
      cell.dataset.path = typeof p[2] === "string" ? p[2] : JSON.stringify(p[2]);
      cell.dataset.value = JSON.stringify(value);
    }
    if (ci) cell.dataset.ci = JSON.stringify(ci);
    if (ci && p[4]) cell.dataset.ciPath = JSON.stringify(p[4]);
    body.appendChild(el("tr", {}, [el("th", { text: p[0] }), cell]));
  });
  return el("table", { cls: "kv" }, [body]);
}

function gridTable(columns, rows, rowPaths, absent, headers) {
  var gone = {};
  (absent || []).forEach(function (rc) { gone[rc[0] + "," + rc[1]] = true; });
  var head = el("tr", {}, (headers || columns).map(function (c) { return el("th", { text: c }); }));
  var body = el("tbody");
  rows.forEach(function (row, r) {
    body.appendChild(el("tr", {}, row.map(function (v, c) {
      if (gone[r + "," + c]) return el("td");
      var td = el("td", { text: fmtValue(v), cls: typeof v === "number" ? "num" : "" });
      if (rowPaths && columns[c] !== "") {
        td.dataset.path = JSON.stringify(rowPaths[r].concat([columns[c]]));
        td.dataset.value = JSON.stringify(v === undefined ? null : v);
      }
      return td;
    })));
  });
  return el("table", {}, [el("thead", {}, [head]), body]);
}

function renderBlock(b) {
  var box = el("div", { cls: "block" + (b.headline ? " headline" : ""), data: { block: JSON.stringify(b.path) } }, [el("h3", { text: b.title })]);
  if (b.headline && !b.items.length) box.appendChild(el("p", { cls: "muted", text: "no headline figures in this run's summary" }));
  if (b.kind === "kv") box.appendChild(kvTable(b.items));
  else if (b.kind === "table") box.appendChild(gridTable(b.columns, b.rows, b.row_paths, b.absent, b.headers));
  else box.appendChild(el("details", {}, [el("summary", { text: "show" }), el("pre", { text: b.text })]));
  return box;
}

function renderSummary() {
  var root = clear(document.getElementById("tab-summary"));
  DATA.runs.forEach(function (run, i) {
    var t = table(i);
    var card = el("div", { cls: "card", data: { run: i } }, [
      el("h2", {}, [run.name + " ", el("span", { cls: "chip", text: run.pipeline })]),
      el("p", { cls: "muted", text: run.path + " \u00b7 " + plural(t.n, "record") }),
      el("p", { cls: "signature", text: run.signature_line }),
    ]);
    if (run.warnings.length) {
      card.appendChild(el("ul", { cls: "warn" }, run.warnings.map(function (w) {
        return el("li", { text: w });
      })));
    }
    card.appendChild(renderBlock(run.blocks[0]));  // the headline, above everything else
    var status = t.values("status"), counts = {};
    t.codes("status").forEach(function (c) { counts[status[c]] = (counts[status[c]] || 0) + 1; });
    card.appendChild(el("p", {}, ["records by status: "].concat(["ok", "unscored", "error"].map(
      function (s) { return el("span", { cls: "chip", data: { status: s }, text: s + " " + (counts[s] || 0) }); }))));
    run.figures.forEach(function (f) {
      card.appendChild(el("figure", {}, [el("img", { src: f.uri, alt: f.name }),
        el("figcaption", { cls: "muted", text: f.name })]));
    });
    var blocks = el("div", { cls: "blocks" });
    run.blocks.slice(1).forEach(function (b) { blocks.appendChild(renderBlock(b)); });
    card.appendChild(blocks);
    Array.prototype.slice.call(document.querySelectorAll('#notes .md-note[data-run="' + i + '"]'))
      .forEach(function (note) { note.hidden = false; card.appendChild(note); });
    root.appendChild(card);
  });
}
