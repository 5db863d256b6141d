/* judgekit view, part 2 of 5: the item table (filters, search, sort, pages) and the detail pane. */
var PAGE = 100;
var COLUMNS = [  // [header, kind, column]
  ["item", "text", "item"], ["stage", "cat", "stage"], ["model", "cat", "model"],
  ["status", "cat", "status"], ["reason", "cat", "reason_kind"], ["label", "cat", "label"],
  ["sample", "cat", "sample_index"], ["attempts", "num", "attempts"], ["re-asks", "num", "reasks"],
  ["latency s", "num", "latency_s"], ["tokens out", "num", "tokens_out"], ["cache", "num", "cache_hit"]
];

function newState(run) {
  return { run: run, filters: {}, search: "", sort: null, page: 0, matches: null, pos: -1, row: -1 };
}

function columnsOf(t) {
  var extra = t.rows.facets.filter(function (f) { return f.indexOf("meta.") === 0; }).map(function (f) {
    return [f.slice(5), "cat", f];
  });
  return COLUMNS.slice(0, 3).concat(extra, COLUMNS.slice(3));
}

function cellValue(t, col, i) {
  if (col[1] === "text") return t.text(col[2], i);
  if (col[1] === "cat") return t.cat(col[2], i);
  return t.num(col[2], i);
}

function buildFacets() {
  var S = JK.state, t = table(S.run), box = clear(document.getElementById("facets"));
  t.rows.facets.forEach(function (name) {
    var codes = t.codes(name), values = t.values(name), counts = new Array(values.length).fill(0);
    for (var i = 0; i < codes.length; i++) counts[codes[i]]++;
    var label = words(name.replace("meta.", "").replace("reason_kind", "reason").replace("sample_index", "sample"));
    var select = el("select", { data: { facet: name }, "aria-label": label, on: { change: function () {
      var v = select.value;
      if (v === "") delete S.filters[name]; else S.filters[name] = Number(v);
      applyFilters();
    } } }, [el("option", { value: "", text: label + ": all" })]);
    values.map(function (v, c) { return [v, c]; })
      .sort(function (a, b) { return compareValues(a[0], b[0]); })
      .forEach(function (p) {
        var shown = p[0] === null ? "(none)" : String(p[0]);
        select.appendChild(el("option", { value: p[1], text: label + ": " + shown + " (" + counts[p[1]] + ")" }));
      });
    if (values.length > 1) box.appendChild(select);
  });
}

function applyFilters() {
  if (DATA.bulk && JK.state.search.trim()) {  // the raw answers are still on their way
    document.getElementById("count").textContent = "searching once the answers are loaded\u2026";
    JK.bulk.then(applyFilters);
    return;
  }
  var S = JK.state, t = table(S.run), n = t.n, out = new Int32Array(n), k = 0;
  var active = Object.keys(S.filters).map(function (f) { return [t.codes(f), S.filters[f]]; });
  var q = S.search.trim().toLowerCase(), hay = q ? t.haystack() : null;
  outer: for (var i = 0; i < n; i++) {
    for (var a = 0; a < active.length; a++) if (active[a][0][i] !== active[a][1]) continue outer;
    if (hay && hay[i].indexOf(q) < 0) continue;
    out[k++] = i;
  }
  S.matches = out.slice(0, k);
  sortMatches();
  S.page = 0;
  S.pos = S.row >= 0 ? S.matches.indexOf(S.row) : -1;
  if (S.pos >= 0) S.page = Math.floor(S.pos / PAGE);
  renderRows();
}

function sortMatches() {
  var S = JK.state, t = table(S.run);
  if (!S.sort) return;
  var col = S.sort.col, dir = S.sort.dir, key;
  if (col[1] === "cat") {
    var values = t.values(col[2]), rank = values.map(function (v, c) { return [v, c]; })
      .sort(function (a, b) { return compareValues(a[0], b[0]); });
    var of = new Int32Array(values.length);
    rank.forEach(function (p, r) { of[p[1]] = r; });
    var codes = t.codes(col[2]);
    key = function (i) { return of[codes[i]]; };
  } else if (col[1] === "num") {
    var nums = t.numbers(col[2]);
    key = function (i) { return nums[i]; };
  } else {  // text (item ids): ranks of the distinct values in natural order (r2 before r10)
    var texts = t.rows.text[col[2]], ranks = new Map();
    Array.from(new Set(texts)).sort(compareValues).forEach(function (v, r) { ranks.set(v, r); });
    key = function (i) { return ranks.get(texts[i]); };
  }
  var arr = Array.prototype.slice.call(S.matches);
  arr.sort(function (a, b) { var x = key(a), y = key(b); return x < y ? -dir : x > y ? dir : a - b; });
  S.matches = Int32Array.from(arr);
}

function renderHead() {
  var S = JK.state, t = table(S.run), cols = columnsOf(t);
  var row = el("tr", {}, cols.map(function (col) {
    var mark = S.sort && S.sort.col[2] === col[2] ? (S.sort.dir > 0 ? " \u25b2" : " \u25bc") : "";
    return el("th", { text: col[0] + mark, cls: col[1] === "num" ? "num" : "", data: { col: col[2] },
      title: "sort by " + col[0], on: { click: function () {
        S.sort = { col: col, dir: S.sort && S.sort.col[2] === col[2] ? -S.sort.dir : 1 };
        sortMatches(); S.page = 0; S.pos = S.matches.indexOf(S.row); renderHead(); renderRows();
      } } });
  }));
  clear(document.querySelector("#items thead")).appendChild(row);
}

function renderRows() {
  var S = JK.state, t = table(S.run), cols = columnsOf(t), body = clear(document.querySelector("#items tbody"));
  var total = S.matches.length, pages = Math.max(1, Math.ceil(total / PAGE));
  S.page = Math.min(S.page, pages - 1);
  var start = S.page * PAGE, end = Math.min(total, start + PAGE);
  var frag = document.createDocumentFragment();
  for (var p = start; p < end; p++) {
    (function (pos) {
      var i = S.matches[pos];
      var tr = el("tr", { data: { row: i }, cls: i === S.row ? "selected" : "", on: { click: function () { select(pos); } } },
        cols.map(function (col) {
          var v = cellValue(t, col, i);
          if (col[2] === "status") return el("td", {}, [el("span", { cls: "status " + v, text: v })]);
          if (col[2] === "cache_hit") v = v ? "hit" : "";
          return el("td", { text: fmt(v), title: col[1] === "text" ? v : null, cls: col[1] === "num" ? "num" : "" });
        }));
      frag.appendChild(tr);
    })(p);
  }
  body.appendChild(frag);
  var count = document.getElementById("count");
  count.textContent = total.toLocaleString("en") + " of " + plural(t.n, "record");
  count.dataset.count = total;
  var pager = clear(document.getElementById("pager"));
  pager.appendChild(el("button", { text: "\u25c0 prev", disabled: S.page === 0 ? "" : null,
    on: { click: function () { S.page--; renderRows(); } } }));
  pager.appendChild(el("span", { text: " page " + (S.page + 1) + " of " + pages + " " }));
  pager.appendChild(el("button", { text: "next \u25b6", disabled: S.page >= pages - 1 ? "" : null,
    on: { click: function () { S.page++; renderRows(); } } }));
}

function select(pos) {
  var S = JK.state;
  if (pos < 0 || pos >= S.matches.length) return;
  if (DATA.bulk) { JK.bulk.then(function () { select(pos); }); return; }  // keys on their way
  S.pos = pos; S.row = S.matches[pos];
  var page = Math.floor(pos / PAGE);
  if (page !== S.page) { S.page = page; renderRows(); }
  Array.prototype.forEach.call(document.querySelectorAll("#items tbody tr"), function (tr) {
    tr.classList.toggle("selected", Number(tr.dataset.row) === S.row);
    if (Number(tr.dataset.row) === S.row) keepItemInView(tr);
  });
  renderDetail(document.getElementById("detail"), S.run, S.row);
  var hash = "item=" + encodeURIComponent(table(S.run).text("item", S.row)) +
    (DATA.runs.length > 1 ? "&run=" + S.run : "") + "&key=" + encodeURIComponent(table(S.run).text("key", S.row));
  if (history.replaceState) history.replaceState(null, "", "#" + hash);
}

/* Bring row tr into view vertically without losing the item column: a wide table (more columns
   than its pane is wide) is scrolled back so its first column (the item, also sticky) shows. */
function keepItemInView(tr) {
  tr.scrollIntoView({ block: "nearest", inline: "nearest" });
  var wrap = document.getElementById("table-wrap"), cell = tr.cells[0];
  if (!wrap || !cell) return;
  var box = wrap.getBoundingClientRect(), r = cell.getBoundingClientRect();
  if (r.left < box.left || r.right > box.right) wrap.scrollLeft = Math.max(0, cell.offsetLeft);
}

function showItems(run) {
  if (!JK.state || JK.state.run !== run) {
    JK.state = newState(run);
    document.getElementById("run-select").value = String(run);
    document.getElementById("search").value = "";
    buildFacets(); renderHead(); applyFilters();
  }
}

function field(name, value) { return [name, value]; }

/* The detail of record i of a run: the item (pipelineContext: what was judged), the human
   votes, the record's fields, the raw output and the parsed answer. opts.unit: the unit a
   compare or humans list opened it for (a spilling meaning is then highlighted). */
function renderDetail(box, run, i, opts) {
  if (DATA.bulk) {  // the raw answers are still on their way: draw it once they are here
    clear(box).appendChild(el("p", { cls: "muted", text: "loading the answers\u2026" }));
    JK.bulk.then(function () { renderDetail(box, run, i, opts); });
    return;
  }
  var t = table(run), r = DATA.runs[run], parsed = t.parsed(i);
  clear(box);
  box.dataset.row = i; box.dataset.key = t.text("key", i);
  box.appendChild(el("h3", { text: (DATA.runs.length > 1 ? r.name + " \u00b7 " : "") + "record " + (i + 1) + " of " + t.n }));
  box.appendChild(el("p", {}, [el("strong", { cls: "detail-item", text: t.text("item", i) }), " ",
    el("span", { cls: "status " + t.cat("status", i), text: t.cat("status", i) })]));
  var context = pipelineContext(run, i, parsed, opts || {});
  if (context) box.appendChild(context);
  var votes = humanVotes(t.text("item", i));
  if (votes) box.appendChild(votes);
  var rest = t.meta(i);
  var facets = t.rows.facets.filter(function (f) { return f.indexOf("meta.") === 0; });
  box.appendChild(kvTable([
    field("key", t.text("key", i)), field("stage / role", t.cat("stage", i) + " / " + t.cat("role", i)),
    field("model", t.cat("model", i)), field("route", t.cat("route", i)), field("served by", t.cat("served_by", i)),
    field("prompt", t.cat("prompt_id", i)), field("prompt hash", t.cat("prompt_hash", i)),
    field("schema", t.cat("schema_name", i)), field("params", t.cat("params", i)),
    field("sample", t.cat("sample_index", i)), field("status", t.cat("status", i)),
    field("reason", t.text("reason", i)), field("label", t.cat("label", i)),
    ["label probabilities", t.labelProbs(i), "label_probs"],
    field("attempts", t.num("attempts", i)), field("re-asks", t.num("reasks", i)),
    field("latency s", t.num("latency_s", i)),
    field("tokens in / out", t.num("tokens_in", i) + " / " + t.num("tokens_out", i)),
    field("cost $", t.num("cost", i)), field("cache hit", t.num("cache_hit", i) ? "yes" : "no")
  ].concat(facets.map(function (f) { return field(f.slice(5), t.cat(f, i)); }),
    Object.keys(rest).map(function (k) { return field(k, rest[k]); }))));
  box.appendChild(el("h3", { text: "raw output" }));
  box.appendChild(longText("pre", t.text("raw", i) === null ? "(no output)" : t.text("raw", i), "raw"));
  box.appendChild(el("h3", { text: "parsed answer" }));
  box.appendChild(longText("pre", parsed === null || parsed === undefined ? "(none)" : JSON.stringify(parsed, null, 1), "parsed"));
}
