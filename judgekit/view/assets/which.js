/* judgekit view: the "Which judge?" tab (DATA.which, from judgekit.view.which_judge). One table
   per facet and statistic: each judge's value with its CI and n, the human ceiling on the same
   items, the difference to the best judge with its p-value, wide CIs marked; every label and
   rater note beside the figures it affects. Every string is a text node, never HTML. */
"use strict";

function whichCI(f) {
  var s = fmt(f.value);
  if (f.ci_low !== null && f.ci_low !== undefined) s += " [" + fmt(f.ci_low) + ", " + fmt(f.ci_high) + "]";
  return s;
}

function whichRow(f, ceiling) {
  var v = f.versus_best;
  var diff = ceiling ? "\u2013" : (v ? fmt(v.delta) + (v.p_value !== null && v.p_value !== undefined ? " (p " + fmt(v.p_value) + ")" : "") : "best");
  var value = el("td", { cls: f.wide ? "wide" : null, text: whichCI(f) + (f.wide ? " (wide CI: few items)" : "") });
  return el("tr", { cls: ceiling ? "ceiling" : null, data: { judge: f.judge } }, [
    el("td", { text: f.judge }), value, el("td", { text: fmt(f.n) }),
    el("td", { text: f.rank === null || f.rank === undefined ? "\u2013" : "#" + f.rank }),
    el("td", { text: diff }),
  ]);
}

function whichTable(t) {
  var head = el("tr", {}, ["Judge", t.statistic.name + " [95% CI]", "n", "Cluster", "Difference to the best (p)"]
    .map(function (h) { return el("th", { text: h }); }));
  var body = el("tbody", {}, t.judges.map(function (f) { return whichRow(f, false); }));
  if (t.ceiling) body.appendChild(whichRow(t.ceiling, true));
  return el("div", { cls: "which-table", data: { statistic: t.statistic.key } }, [
    el("h4", { text: t.statistic.name }),
    el("p", { cls: "meaning", text: t.statistic.meaning }),
    el("table", {}, [el("thead", {}, [head]), body]),
  ]);
}

function whichNotes(notes) {
  if (!notes || !notes.length) return null;
  return el("ul", { cls: "which-notes warn" }, notes.map(function (n) { return el("li", { text: n }); }));
}

function renderWhich() {
  var W = DATA.which, root = clear(document.getElementById("tab-which"));
  root.appendChild(el("h2", { text: "Which judge?" }));
  if (W.note) { root.appendChild(el("p", { cls: "warn", text: W.note })); return; }
  root.appendChild(el("p", { text: "Each judge against the human majority on the same items; the human " +
    "ceiling is each human against the others on those items. A CI wider than " + fmt(W.wide_share) +
    " is marked wide. Cluster #1: no judge is significantly better (paired permutation test, alpha 0.05)." }));
  var top = whichNotes(W.notes);
  if (top) root.appendChild(top);
  W.facets.forEach(function (f) {
    var sec = el("section", { cls: "which-facet", data: { facet: f.facet } }, [
      el("h3", { text: f.facet + " (" + fmt(f.items) + " items" + (f.ties ? ", " + fmt(f.ties) + " human ties" : "") + ")" }),
    ]);
    var notes = whichNotes(f.notes);
    if (notes) sec.appendChild(notes);
    f.tables.forEach(function (t) { sec.appendChild(whichTable(t)); });
    root.appendChild(sec);
  });
}
