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
  var value = el("td", { cls: f.wide ? "wide" : null, text: whichCI(f) + (f.wide ? " (wide CI: few items)" : ""),
    title: f.wide ? "CI wider than " + fmt(DATA.which.wide_share) + " of the scale: too few items to tell judges apart" : null });
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
  root.appendChild(el("p", { text: "Each judge against the human majority on the same items; the human " +
    "ceiling is each human against the others on those items. A CI wider than " + fmt(W.wide_share) +
    " is marked wide. Cluster #1: no judge is significantly better (paired permutation test, alpha 0.05)." }));
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
