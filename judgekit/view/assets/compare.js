/* judgekit view, part 4 of 5: compare mode (judges side by side), the lists of units behind a
   confusion matrix, tabs, keyboard (j / k / arrows, /), deep links (#item=ID), start-up (start()
   is called after the last part). */

/* A confusion matrix whose every cell lists its units (onCell(row label, column label)). */
function confusionTable(conf, rowName, colName, onCell) {
  var head = el("tr", {}, [el("th", { text: rowName + " \\ " + colName })].concat(conf.columns.map(function (c) { return el("th", { text: c }); })));
  var body = el("tbody", {}, conf.index.map(function (r, k) {
    return el("tr", {}, [el("th", { text: r })].concat(conf.data[k].map(function (n, c) {
      var col = conf.columns[c];
      return el("td", { cls: "num" + (onCell ? " cell" : "") + (r === col ? " diagonal" : ""), text: fmt(n),
        title: onCell ? "list these items" : null, data: { cell: r + "|" + col },
        on: onCell ? { click: function () { onCell(r, col); } } : null });
    })));
  }));
  return el("table", { cls: "confusion" }, [el("thead", {}, [head]), body]);
}

/* A paged list of units, each with an "open" button; show(rows, caption, back) replaces its
   rows (back: a function that shows the whole list again, offered as a button). */
function cellList(header, cell, onOpen) {
  var box = el("div", { cls: "paged" }), rows = [], caption = "", page = 0, size = 50, back = null;
  function draw() {
    clear(box);
    var pages = Math.max(1, Math.ceil(rows.length / size));
    box.appendChild(el("p", { cls: "muted caption" }, [
      el("span", { cls: "what", text: caption }), " \u00b7 page " + (page + 1) + " of " + pages + " ",
      el("button", { text: "\u25c0", disabled: page === 0 ? "" : null, on: { click: function () { page--; draw(); } } }),
      el("button", { text: "\u25b6", disabled: page >= pages - 1 ? "" : null, on: { click: function () { page++; draw(); } } }),
      back ? el("button", { cls: "link all", text: "show every disagreement", on: { click: back } }) : null]));
    var body = el("tbody");
    rows.slice(page * size, page * size + size).forEach(function (r) {
      body.appendChild(el("tr", {}, cell(r).map(function (v) {
        return el("td", { text: fmt(v), title: typeof v === "string" && v.length > 40 ? v : null });
      }).concat([el("td", {}, [el("button", { cls: "link open", text: "open", on: { click: function () { onOpen(r); } } })])])));
    });
    box.appendChild(el("table", { cls: "disagreements" }, [el("thead", {}, [el("tr", {}, header.concat([""]).map(function (h) { return el("th", { text: h }); }))]), body]));
  }
  box.show = function (r, c, whole) { rows = r; caption = c; page = 0; back = whole || null; draw(); };
  return box;
}

/* The units of one confusion cell of entry (a pair, or a judge against the humans): on the
   diagonal its agreements (at most 500 a label listed; the caption says how many there are),
   elsewhere the disagreements of that cell. Rows as the disagreement rows: [unit, row label,
   column label, record rows...]. */
function cellRows(entry, r, c) {
  if (r === c) {
    var ag = entry.agreements[r] || { n: 0, units: [] };
    var rows = ag.units.map(function (u) { return [u[0], r, r].concat(u.slice(1)); });
    return [rows, (ag.n > rows.length ? "showing " + rows.length + " of " : "") + plural(ag.n, "agreement") + " on " + r];
  }
  var wrong = entry.disagreements.filter(function (d) { return String(d[1]) === r && String(d[2]) === c; });
  return [wrong, plural(wrong.length, "disagreement") + " (" + r + " vs " + c + ")"];
}

function majorityOf(unit) {
  var m = DATA.humans ? DATA.humans.majority[unit] : undefined;
  return m === undefined ? "\u2013" : m === "<tie>" ? "tie" : m;
}

function sourceName(id) { return DATA.sources[id].name; }

var PAIR_COLUMNS = [  // every pair side by side: [header, value of a pair]
  ["A", function (p) { return sourceName(p.a); }], ["B", function (p) { return sourceName(p.b); }],
  ["units in both", function (p) { return p.n; }],
  ["percent agreement [95% CI]", function (p) { return fmtCI(p.agreement); }],
  ["Cohen's kappa [95% CI]", function (p) { return fmtCI(p.kappa); }],
  ["disagreements", function (p) { return p.disagreements.length; }]
];

function summaryTable(id, columns, entries, onPick) {
  return el("table", { id: id, cls: "side-table" }, [
    el("thead", {}, [el("tr", {}, columns.map(function (c) { return el("th", { text: c[0] }); }))]),
    el("tbody", {}, entries.map(function (e, k) {
      return el("tr", { cls: onPick ? "pick" : "", data: { entry: k }, on: onPick ? { click: function () { onPick(k); } } : null },
        columns.map(function (c) {
          var v = c[1](e);
          return el("td", { text: fmt(v), cls: typeof v === "number" ? "num" : "", data: { col: c[0] } });
        }));
    }))]);
}

function renderCompare() {
  var root = clear(document.getElementById("tab-compare"));
  if (!DATA.pairs.length) {
    root.appendChild(el("p", { cls: "muted", text: "Compare mode needs two judges over the same items: " +
      "pass two or more runs (judgekit view RUN_A RUN_B), or a run with several judges." }));
    return;
  }
  var pick = el("select", { id: "pair-select" }, DATA.pairs.map(function (p, k) {
    return el("option", { value: k, text: sourceName(p.a) + "  vs  " + sourceName(p.b) + " (" + p.n + " shared)" });
  }));
  var body = el("div", { id: "pair" });
  function choose(k) { pick.value = String(k); drawPair(body, DATA.pairs[k]); }
  pick.addEventListener("change", function () { choose(Number(pick.value)); });
  if (DATA.pairs.length > 1) {
    root.appendChild(el("div", { cls: "card" }, [el("h2", { text: "every judge pair" }),
      summaryTable("pairs", PAIR_COLUMNS, DATA.pairs, choose)]));
  }
  root.appendChild(el("p", {}, ["pair ", pick]));
  root.appendChild(body);
  drawPair(body, DATA.pairs[0]);
}

function drawPair(body, p) {
  var A = DATA.sources[p.a], B = DATA.sources[p.b];
  clear(body);
  var panes = el("div", { cls: "panes", id: "pair-detail" });
  var header = ["unit", "item", "A: " + A.name, "B: " + B.name].concat(DATA.humans ? ["human majority"] : []);
  var list = cellList(header, function (r) {
    return [unitName(A.run, r[0]), itemSnippet(A.run, r[0], r[3]), r[1], r[2]].concat(DATA.humans ? [majorityOf(r[0])] : []);
  }, function (r) {
    clear(panes);
    [[A, r[3]], [B, r[4]]].forEach(function (side) {
      var pane = el("div", { cls: "pane" });
      if (side[1] >= 0) renderDetail(pane, side[0].run, side[1], { unit: r[0] });
      else pane.appendChild(el("p", { cls: "muted", text: "no record of this unit in " + side[0].name }));
      panes.appendChild(pane);
    });
    panes.scrollIntoView({ block: "nearest" });
  });
  function all() { list.show(p.disagreements, plural(p.disagreements.length, "disagreement")); }
  body.appendChild(el("div", { cls: "card" }, [el("h2", { text: A.name + " vs " + B.name }), kvTable([
    ["units labelled by both", p.n, "n"], ["only " + A.name, p.only_a], ["only " + B.name, p.only_b],
    ["percent agreement [95% CI]", fmtCI(p.agreement), "agreement"],
    ["Cohen's kappa [asymptotic 95% CI]", fmtCI(p.kappa), "kappa"],
    ["labels from", A.origin + " / " + B.origin]]),
  el("h3", { text: "confusion matrix (rows: A, columns: B; a click on a cell lists its units)" }),
  confusionTable(p.confusion, "A", "B", function (r, c) { var got = cellRows(p, r, c); list.show(got[0], got[1], all); })]));
  all();
  body.appendChild(list);
  body.appendChild(panes);
}

function showTab(name) {
  ["summary", "items", "compare", "humans", "which"].forEach(function (t) {
    var sec = document.getElementById("tab-" + t), btn = document.querySelector('#tabs [data-tab="' + t + '"]');
    if (sec) sec.hidden = t !== name;
    if (btn) btn.classList.toggle("active", t === name);
  });
  if (JK.tab !== name) window.scrollTo(0, 0);  // another tab starts at its top
  JK.tab = name;
}

function openDeepLink() {
  if (DATA.bulk) { JK.bulk.then(openDeepLink); return true; }  // keys and items on their way
  var m = {};
  location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
    var k = kv.indexOf("=");
    if (k <= 0) return;
    var v = kv.slice(k + 1);
    try { v = decodeURIComponent(v); } catch (e) { /* a bad %-escape: the text as typed */ }
    m[kv.slice(0, k)] = v;
  });
  if (m.item === undefined && m.key === undefined) return false;
  var run = Number(m.run || 0);  // a run index that is not one of the runs: the first
  if (!Number.isInteger(run) || run < 0 || run >= DATA.runs.length) run = 0;
  var t = table(run);
  var i = m.key !== undefined ? t.find("key", m.key) : -1;
  if (i < 0 && m.item !== undefined) i = t.find("item", m.item);
  showTab("items"); showItems(run);
  if (i < 0) {  // say so, rather than show nothing
    clear(document.getElementById("detail")).appendChild(el("p", { cls: "warn",
      text: "No record of " + (m.key !== undefined ? "key " + m.key : "item " + m.item) + " in " + DATA.runs[run].name + "." }));
    return true;
  }
  JK.state.row = i; applyFilters();
  if (JK.state.matches.indexOf(i) < 0) {  // filtered out: show every record again
    JK.state = null; showItems(run); JK.state.row = i; applyFilters();
  }
  select(JK.state.matches.indexOf(i));
  return true;
}

function onKey(ev) {
  var tag = (ev.target.tagName || "").toLowerCase();
  if (tag === "input" || tag === "select" || tag === "textarea") {
    if (ev.key === "Escape") ev.target.blur();
    return;
  }
  if (ev.key === "/") { ev.preventDefault(); showTab("items"); document.getElementById("search").focus(); return; }
  if (JK.tab !== "items") return;
  var S = JK.state;
  if (ev.key === "j" || ev.key === "ArrowDown") { ev.preventDefault(); select(Math.min(S.pos + 1, S.matches.length - 1)); }
  if (ev.key === "k" || ev.key === "ArrowUp") { ev.preventDefault(); select(Math.max(S.pos - 1, 0)); }
}

function start() {
  var tabs = document.getElementById("tabs");
  [["summary", "Summary"], ["items", "Items"], ["compare", "Compare"], ["humans", "Judge vs humans"], ["which", "Which judge?"]].forEach(function (t) {
    if (t[0] === "humans" && !DATA.humans) return;
    if (t[0] === "which" && !DATA.which) return;
    tabs.appendChild(el("button", { text: t[1], data: { tab: t[0] }, on: { click: function () { showTab(t[0]); } } }));
  });
  document.getElementById("built").textContent = "judgekit " + DATA.judgekit + " \u00b7 built " + DATA.built;
  var pick = document.getElementById("run-select");
  DATA.runs.forEach(function (r, k) { pick.appendChild(el("option", { value: k, text: r.name })); });
  document.getElementById("run-pick").hidden = DATA.runs.length < 2;
  pick.addEventListener("change", function () { showItems(Number(pick.value)); });
  var timer = null, search = document.getElementById("search");
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { JK.state.search = search.value; applyFilters(); }, 150);
  });
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", openDeepLink);
  var t0 = performance.now(), times = window.judgekitTimes = { data: t0 - JK.started };
  function timed(name, fn) { var t = performance.now(); fn(); times[name] = performance.now() - t; }
  timed("summary", renderSummary);
  timed("items", function () { showItems(0); });
  function rest() {  // what needs the bulk of a large report (compare mode shows item texts)
    timed("compare", function () { renderCompare(); renderClusters(); });
    timed("humans", function () { if (DATA.humans) { renderHumans(); renderConfidence(); } });
    timed("which", function () { if (DATA.which) renderWhich(); });
  }
  if (!DATA.bulk) rest();
  if (DATA.bulk || !openDeepLink()) showTab("summary");
  document.documentElement.dataset.ready = "1";
  window.judgekitReady = performance.now();
  if (!DATA.bulk) { document.documentElement.dataset.loaded = "1"; return; }
  JK.bulk.then(function () {
    rest();
    openDeepLink();
    document.documentElement.dataset.loaded = "1";
    window.judgekitLoaded = performance.now();
  });
}
