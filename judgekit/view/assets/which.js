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

/* The marks of a figure: a CI of zero width on few items (collapsed), fewer than min_n items
   (small), a CI wider than wide_share (wide); each with a title saying why. */
function whichMarks(f) {
  var W = DATA.which, marks = [], why = [];
  if (f.collapsed) { marks.push("interval collapsed: too few items"); why.push("a bootstrap CI of zero width on " + fmt(f.n) + " items says nothing about uncertainty"); }
  else if (f.small) { marks.push("few items: n < " + fmt(W.min_n)); why.push("fewer than " + fmt(W.min_n) + " items: a figure this small moves with one item"); }
  if (f.wide) { marks.push("wide CI: few items"); why.push("CI wider than " + fmt(W.wide_share) + " of the scale: too few items to tell judges apart"); }
  return { text: marks.length ? " (" + marks.join("; ") + ")" : "", title: why.length ? why.join("; ") : null };
}

function whichRow(f, kind) {
  var v = f.versus_best, ceiling = kind !== "judge";
  var diff = ceiling ? "\u2013" : (v ? fmt(v.delta) + (v.p_value !== null && v.p_value !== undefined ? " (p " + fmt(v.p_value) + ")" : "") : "best");
  var m = whichMarks(f), marked = f.wide || f.small || f.collapsed;
  var name = kind === "on_ceiling" ? f.judge + " on the ceiling's rows" : f.judge;
  var value = el("td", { cls: marked ? "wide" : null, text: whichCI(f) + m.text, title: m.title });
  return el("tr", { cls: ceiling ? "ceiling" : null, data: { judge: f.judge, kind: kind } }, [
    el("td", { text: name }), value, el("td", { text: fmt(f.n) }),
    el("td", { text: f.rank === null || f.rank === undefined ? "\u2013" : "#" + f.rank }),
    el("td", { text: diff }),
  ]);
}

/* The notes that change a row, in a row of their own right under it. */
function whichRowNotes(f, kind) {
  if (!f.notes || !f.notes.length) return null;
  return el("tr", { cls: "row-notes", data: { judge: f.judge, kind: kind } }, [el("td", { colspan: "5" }, [
    el("ul", { cls: "warn" }, f.notes.map(function (n) { return el("li", { text: n }); }))])]);
}

function whichTable(t) {
  var head = el("tr", {}, ["Judge", t.statistic.name + " [95% CI]", "n (items)", "Cluster", "Difference to the best (p)"]
    .map(function (h) { return el("th", { text: h }); }));
  var body = el("tbody", {});
  function add(f, kind) {
    body.appendChild(whichRow(f, kind));
    var notes = whichRowNotes(f, kind);
    if (notes) body.appendChild(notes);
  }
  t.judges.forEach(function (f) { add(f, "judge"); });
  if (t.ceiling) add(t.ceiling, "ceiling");
  (t.on_ceiling || []).forEach(function (f) { add(f, "on_ceiling"); });
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

/* Per judge: ECE of its label probabilities and cost per 1,000 items, n beside each
   (judgekit.view.which_facts); a wide ECE CI greyed with a title saying why. */
function factsTable(judges, wideShare) {
  var head = el("tr", {}, ["Judge", "ECE [95% CI]", "n", "Cost per 1,000 items (USD)", "n"]
    .map(function (h) { return el("th", { text: h }); }));
  var body = el("tbody", {}, judges.map(function (j) {
    var e = j.ece, c = j.cost, ece;
    if (e.note) ece = el("td", { cls: "muted", text: e.note });
    else ece = el("td", { cls: e.wide ? "wide" : null, text: whichCI({ value: e.value, ci_low: e.ci ? e.ci[0] : null,
      ci_high: e.ci ? e.ci[1] : null }) + (e.wide ? " (wide CI: few items)" : ""),
      title: e.wide ? "CI wider than " + fmt(wideShare) + ": too few items to rank judges by it" : null });
    return el("tr", { data: { source: j.source } }, [el("td", { text: j.name }), ece,
      el("td", { cls: "num", text: e.note ? "\u2013" : fmt(e.n) }),
      c.note ? el("td", { cls: "muted", text: c.note }) : el("td", { cls: "num", text: "$" + c.usd_per_1000.toFixed(4) }),
      el("td", { cls: "num", text: c.note ? "\u2013" : fmt(c.n) })]);
  }));
  return el("div", { cls: "which-facts" }, [el("h4", { text: "Calibration and cost" }),
    el("p", { cls: "meaning", text: "ECE (expected calibration error): how far the judge's stated label " +
      "probabilities are from how often it is right, 0 = calibrated; cost: the run's known cost per 1,000 items judged." }),
    el("table", {}, [el("thead", {}, [head]), body])]);
}

function renderWhich() {
  var W = DATA.which, root = clear(document.getElementById("tab-which"));
  root.appendChild(el("h2", { text: "Which judge?" }));
  if (W.note) { root.appendChild(el("p", { cls: "warn", text: W.note })); return; }
  root.appendChild(el("p", { cls: "which-how", text: "Each judge against the human majority on the items with a " +
    "majority (human ties as the tie policy says). The human ceiling is on other rows: each human against the " +
    "majority of the other humans, one row per (human, item), ties included as the tie policy says; beside it, " +
    "each judge on those same rows (its label against the same references, same resamples), so compare the " +
    "ceiling with those rows, not with the judges' own. n counts items everywhere. Marked: n below " + fmt(W.min_n) +
    ", a CI of zero width on so few items (interval collapsed), a CI wider than " + fmt(W.wide_share) +
    ". Cluster #1: no judge is significantly better (paired permutation test, alpha 0.05). Each note about " +
    "labels and raters sits under the row it changes; all of them are listed here too." }));
  var top = whichNotes(W.notes);
  if (top) root.appendChild(top);
  if (W.judges && W.judges.length) root.appendChild(factsTable(W.judges, W.wide_share));
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
