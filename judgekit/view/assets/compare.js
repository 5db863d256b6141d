/* judgekit view, part 3 of 3: pipeline context in the detail, compare mode, judges vs humans,
   tabs, keyboard (j / k / arrows, /), deep links (#item=ID), start-up. */
var SEVERITY = { minor: 1, major: 2, critical: 3 };

function metaOf(run, i) {
  var t = table(run), out = {}, rest = DATA.runs[run].rows.meta[i] || {};
  t.rows.facets.forEach(function (f) { if (f.indexOf("meta.") === 0) out[f.slice(5)] = t.cat(f, i); });
  Object.keys(rest).forEach(function (k) { out[k] = rest[k]; });
  return out;
}

function meaningsBox(meanings, verdicts) {
  var box = el("div", { cls: "meanings" }, [el("h3", { text: "the 5 meanings" + (verdicts ? " and the judge's verdicts" : "") })]);
  verdicts = Array.isArray(verdicts) ? verdicts : null;  // shapes as no judgekit run writes them
  (Array.isArray(meanings) ? meanings : []).forEach(function (m, k) {
    if (m === null || typeof m !== "object") return;
    var v = verdicts ? verdicts[k] : undefined;
    box.appendChild(el("div", { cls: "meaning" + (v === true ? " valid" : v === false ? " invalid" : "") }, [
      v === undefined ? null : el("span", { cls: "verdict", text: v ? "valid \u2713 " : "invalid \u2717 " }),
      el("span", { text: (k + 1) + ". " + m.meaning }),
      el("div", { cls: "muted", text: (Array.isArray(m.examples) ? m.examples : []).join(" \u00b7 ") })]));
  });
  return box;
}

function spillingContext(run, i, parsed) {
  var t = table(run), x = DATA.runs[run].extras, meta = metaOf(run, i), stage = t.cat("stage", i);
  if (stage !== "judge" && stage !== "generate") return null;
  var entry = x.dictionary[meta.lang + "|" + meta.translation];
  var gen = stage === "judge" ? x.generation[i] : i;
  var meanings = gen !== undefined && t.cat("status", gen) === "ok" ? (t.parsed(gen) || {}).meanings : null;
  var verdicts = stage === "judge" && parsed ? parsed.valid : null;
  var left = el("div", {}, [el("h3", { text: "dictionary entry (" + meta.lang + ")" }),
    el("pre", { cls: "dictionary", text: entry || "(no entry for " + meta.translation + ")" })]);
  if (x.dictionary_note) left.appendChild(el("p", { cls: "warn", text: x.dictionary_note }));
  return el("div", { cls: "side-by-side spilling" }, [left, meaningsBox(meanings, verdicts)]);
}

function spanText(text, errors, side) {
  var chars = Array.from(text || ""), cuts = [0, chars.length], mine = errors.filter(function (e) {
    return (e.side || "translation") === side && e.start >= 0 && e.end <= chars.length;
  });
  mine.forEach(function (e) { cuts.push(e.start, e.end); });
  cuts = cuts.filter(function (c, k, all) { return all.indexOf(c) === k; }).sort(function (a, b) { return a - b; });
  var box = el("div", { cls: "spans", dir: "auto", data: { side: side } });
  for (var k = 0; k + 1 < cuts.length; k++) {
    var a = cuts[k], b = cuts[k + 1], piece = chars.slice(a, b).join("");
    var over = mine.filter(function (e) { return e.start <= a && e.end >= b; });
    if (!over.length) { box.appendChild(document.createTextNode(piece)); continue; }
    var worst = over.reduce(function (w, e) { return (SEVERITY[e.severity] || 0) > (SEVERITY[w.severity] || 0) ? e : w; });
    box.appendChild(el("mark", { cls: worst.severity, data: { type: worst.type, severity: worst.severity },
      title: over.map(function (e) { return e.type + " " + e.severity + " (" + e.mqm_category + ")"; }).join("; "),
      text: piece }));
    mine.forEach(function (e) {
      if (e.end === b) box.appendChild(el("sup", { cls: "chip", text: e.type + " \u00b7 " + e.severity }));
    });
  }
  return box;
}

function errorsContext(run, i) {
  var seg = DATA.runs[run].extras.segments[table(run).text("item", i)];
  if (!seg) return null;
  var errors = (Array.isArray(seg.errors) ? seg.errors : []).filter(function (e) {  // spans only
    return e !== null && typeof e === "object" && Number.isInteger(e.start) && Number.isInteger(e.end) && e.start < e.end;
  });
  return el("div", { cls: "errors-context" }, [
    el("h3", { text: "translation with the judge's spans (" + errors.length + " errors, MQM " + fmt(seg.mqm) + ")" }),
    spanText(seg.translation, errors, "translation"),
    el("div", { cls: "legend" }, [el("span", {}, [el("mark", { cls: "minor", text: "minor" })]),
      el("span", {}, [el("mark", { cls: "major", text: "major" })]), el("span", {}, [el("mark", { cls: "critical", text: "critical" })])]),
    el("h3", { text: "source" }), spanText(seg.source, errors, "source")]);
}

function pipelineContext(run, i, parsed) {
  var p = DATA.runs[run].pipeline, x = DATA.runs[run].extras;
  if (p === "spilling") return spillingContext(run, i, parsed);
  if (p === "errors") return errorsContext(run, i);
  var item = table(run).text("item", i);
  if (p === "localise" && x.originals[item]) {
    var o = x.originals[item], now = parsed || {};
    return el("div", { cls: "side-by-side" }, [
      el("div", {}, [el("h3", { text: "original pair" }), el("pre", { text: o.source + "\n\n" + o.english })]),
      el("div", {}, [el("h3", { text: "localised pair" }), el("pre", { text: (now.source || "\u2013") + "\n\n" + (now.target || "\u2013") })])]);
  }
  if (p === "cultural" && x.annotations[item]) {
    var a = x.annotations[item];
    return el("div", {}, [el("h3", { text: "item outcome (all samples and judges)" }), kvTable(Object.keys(a).map(function (k) {
      return [k, a[k] !== null && typeof a[k] === "object" ? JSON.stringify(a[k]) : a[k]];
    }))]);
  }
  return null;
}

function confusionTable(conf, rowName, colName) {
  var head = el("tr", {}, [el("th", { text: rowName + " \\ " + colName })].concat(conf.columns.map(function (c) { return el("th", { text: c }); })));
  var body = el("tbody", {}, conf.index.map(function (r, k) {
    return el("tr", {}, [el("th", { text: r })].concat(conf.data[k].map(function (n, c) {
      return el("td", { cls: "num", text: fmt(n), data: { cell: r + "|" + conf.columns[c] } });
    })));
  }));
  return el("table", { cls: "confusion" }, [el("thead", {}, [head]), body]);
}

function pagedList(rows, header, cell, onOpen) {
  var box = el("div", { cls: "paged" }), page = 0, size = 50;
  function draw() {
    clear(box);
    var pages = Math.max(1, Math.ceil(rows.length / size));
    box.appendChild(el("p", { cls: "muted", text: rows.length + " disagreements \u00b7 page " + (page + 1) + " of " + pages + " " }, [
      el("button", { text: "\u25c0", disabled: page === 0 ? "" : null, on: { click: function () { page--; draw(); } } }),
      el("button", { text: "\u25b6", disabled: page >= pages - 1 ? "" : null, on: { click: function () { page++; draw(); } } })]));
    var body = el("tbody");
    rows.slice(page * size, page * size + size).forEach(function (r) {
      body.appendChild(el("tr", {}, cell(r).map(function (v) { return el("td", { text: fmt(v) }); }).concat([
        el("td", {}, [el("button", { cls: "link open", text: "open", on: { click: function () { onOpen(r); } } })])])));
    });
    box.appendChild(el("table", { cls: "disagreements" }, [el("thead", {}, [el("tr", {}, header.concat([""]).map(function (h) { return el("th", { text: h }); }))]), body]));
  }
  draw();
  return box;
}

function sourceName(id) { return DATA.sources[id].name; }

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
  pick.addEventListener("change", function () { drawPair(body, DATA.pairs[Number(pick.value)]); });
  root.appendChild(el("p", {}, ["pair ", pick]));
  root.appendChild(body);
  drawPair(body, DATA.pairs[0]);
}

function drawPair(body, p) {
  var A = DATA.sources[p.a], B = DATA.sources[p.b];
  clear(body);
  body.appendChild(el("div", { cls: "card" }, [el("h2", { text: A.name + " vs " + B.name }), kvTable([
    ["units labelled by both", p.n, "n"], ["only " + A.name, p.only_a], ["only " + B.name, p.only_b],
    ["percent agreement [95% bootstrap CI]", fmtCI(p.agreement), "agreement"],
    ["Cohen's kappa [asymptotic 95% CI]", fmtCI(p.kappa), "kappa"],
    ["labels from", A.origin + " / " + B.origin]]),
  el("h3", { text: "confusion matrix (rows: A, columns: B)" }), confusionTable(p.confusion, "A", "B")]));
  var panes = el("div", { cls: "panes", id: "pair-detail" });
  body.appendChild(pagedList(p.disagreements, ["unit", "A: " + A.name, "B: " + B.name],
    function (r) { return [r[0], r[1], r[2]]; }, function (r) {
      clear(panes);
      [[A, r[3]], [B, r[4]]].forEach(function (side) {
        var pane = el("div", { cls: "pane" });
        if (side[1] >= 0) renderDetail(pane, side[0].run, side[1]);
        else pane.appendChild(el("p", { cls: "muted", text: "no record of this unit in " + side[0].name }));
        panes.appendChild(pane);
      });
      panes.scrollIntoView({ block: "nearest" });
    }));
  body.appendChild(panes);
}

function renderHumans() {
  var H = DATA.humans, root = clear(document.getElementById("tab-humans"));
  root.appendChild(el("div", { cls: "card" }, [el("h2", { text: "judges vs humans" }), kvTable([
    ["human labels", H.path], ["human raters", H.raters.join(", ")], ["items", H.n_items],
    ["items whose human votes tie", H.n_ties], ["tie policy", H.tie_policy]])]));
  H.judges.forEach(function (j) {
    var S = DATA.sources[j.source], card = el("div", { cls: "card", data: { source: j.source } }, [el("h2", { text: S.name })]);
    root.appendChild(card);
    if (j.note) { card.appendChild(el("p", { cls: "warn", text: j.note })); return; }
    card.appendChild(kvTable([["items scored", j.n_items, "n_items"], ["human ties", j.n_ties], ["items without a judge label", j.n_unjudged],
      ["accuracy [95% CI]", fmtCI(j.accuracy), "accuracy"], ["macro-F1 [95% CI]", fmtCI(j.macro_f1), "macro_f1"],
      ["Cohen's kappa [95% CI]", fmtCI(j.kappa), "kappa"]]));
    card.appendChild(el("h3", { text: "confusion matrix (rows: human majority, columns: judge)" }));
    card.appendChild(confusionTable(j.confusion, "human", "judge"));
    var cols = j.per_class.length ? Object.keys(j.per_class[0]) : [];
    card.appendChild(gridTable(cols, j.per_class.map(function (r) { return cols.map(function (c) { return r[c]; }); })));
    var pane = el("div", { cls: "pane" });
    card.appendChild(pagedList(j.disagreements, ["item", "human majority", "judge"], function (r) { return [r[0], r[1], r[2]]; },
      function (r) {
        clear(pane);
        if (r[3] >= 0) renderDetail(pane, S.run, r[3]); else pane.appendChild(el("p", { cls: "muted", text: "no record links to this item" }));
      }));
    card.appendChild(pane);
  });
}

function showTab(name) {
  ["summary", "items", "compare", "humans"].forEach(function (t) {
    var sec = document.getElementById("tab-" + t), btn = document.querySelector('#tabs [data-tab="' + t + '"]');
    if (sec) sec.hidden = t !== name;
    if (btn) btn.classList.toggle("active", t === name);
  });
  JK.tab = name;
}

function openDeepLink() {
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
  [["summary", "Summary"], ["items", "Items"], ["compare", "Compare"], ["humans", "Judge vs humans"]].forEach(function (t) {
    if (t[0] === "humans" && !DATA.humans) return;
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
  renderSummary();
  showItems(0);
  renderCompare();
  if (DATA.humans) renderHumans();
  if (!openDeepLink()) showTab("summary");
  document.documentElement.dataset.ready = "1";
  window.judgekitReady = performance.now();
}

start();
