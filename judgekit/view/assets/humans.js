/* judgekit view, part 5 of 5: judges against the humans (--labels): every judge side by side
   with the human ceiling, then per judge its figures, the confusion matrix (a click on a cell
   lists its items), per-class scores and every item it got wrong with the individual votes. */

function ceilingOf(j, who) {  // the ceiling's estimate of "humans" or "judge" (accuracy)
  var c = j.ceiling || {};
  return c[who] ? fmtCI(c[who].accuracy) : "\u2013";
}

var HUMAN_COLUMNS = [  // every judge side by side: [header, value of a judge entry]
  ["judge", function (j) { return DATA.sources[j.source].name; }],
  ["items scored", function (j) { return j.note ? j.note : j.n_items; }],
  ["accuracy [95% CI]", function (j) { return fmtCI(j.accuracy); }],
  ["macro-F1 [95% CI]", function (j) { return fmtCI(j.macro_f1); }],
  ["Cohen's kappa [95% CI]", function (j) { return fmtCI(j.kappa); }],
  ["human ceiling: accuracy [95% CI]", function (j) { return ceilingOf(j, "humans"); }],
  ["judge on the ceiling's references: accuracy [95% CI]", function (j) { return ceilingOf(j, "judge"); }],
  ["disagreements", function (j) { return j.disagreements ? j.disagreements.length : "\u2013"; }],
  ["label and rater notes", function (j) { return judgeNotes(j).join(" \u00b7 ") || "\u2013"; }]
];

/* The notes the command line prints about a judge's labels and raters (judgekit.labels.overlap:
   folded case spellings, labels on one side only, the judge's own rater left out). */
function judgeNotes(j) {
  var notes = ((j.labels || {}).notes || []).slice();
  if (j.left_out) notes.push(j.left_out);
  return notes;
}

function notesList(notes) {
  return el("ul", { cls: "label-notes warn" }, notes.map(function (n) { return el("li", { text: n }); }));
}

function votesText(unit) {
  var v = DATA.humans.votes[unit];
  return v ? v.map(function (x) { return x[0] + " " + x[1]; }).join(" \u00b7 ") : "\u2013";
}

function ceilingBlock(j) {
  var c = j.ceiling || {};
  if (!c.humans) return el("p", { cls: "muted ceiling", text: "human ceiling: " + (c.note || "not computed") });
  var rows = [["rows (human, item) / items", c.n_rows + " / " + c.n_items]];
  ["accuracy", "macro_f1", "kappa"].forEach(function (m) {
    var name = { accuracy: "accuracy", macro_f1: "macro-F1", kappa: "Cohen's kappa" }[m];
    rows.push(["human ceiling, " + name + " [95% CI]", fmtCI(c.humans[m]), "ceiling." + m]);
    if (c.judge) rows.push(["the judge on the same references, " + name + " [95% CI]", fmtCI(c.judge[m]), "ceiling.judge." + m]);
  });
  return el("div", { cls: "ceiling" }, [el("h3", { text: "human ceiling (each human against the majority of the other humans, " +
    "as judgekit calibrate judge prints it)" }), kvTable(rows)]);
}

function renderJudge(root, j) {
  var S = DATA.sources[j.source], card = el("div", { cls: "card", data: { source: j.source } }, [el("h2", { text: S.name })]);
  root.appendChild(card);
  if (j.note) { card.appendChild(el("p", { cls: "warn", text: j.note })); return; }
  if (judgeNotes(j).length) card.appendChild(notesList(judgeNotes(j)));
  card.appendChild(kvTable([["items scored", j.n_items, "n_items"], ["human ties among them", j.n_ties, "n_ties"], ["items without a judge label", j.n_unjudged],
    ["accuracy [95% CI]", fmtCI(j.accuracy), "accuracy"], ["macro-F1 [95% CI]", fmtCI(j.macro_f1), "macro_f1"],
    ["Cohen's kappa [95% CI]", fmtCI(j.kappa), "kappa"]]));
  card.appendChild(ceilingBlock(j));
  var pane = el("div", { cls: "pane" });
  var list = cellList(["item", "text", "human majority", "judge", "human votes"], function (r) {
    return [unitName(S.run, r[0]), itemSnippet(S.run, r[0], r[3]), r[1], r[2], votesText(r[0])];
  }, function (r) {
    clear(pane);
    if (r[3] >= 0) renderDetail(pane, S.run, r[3], { unit: r[0] });
    else pane.appendChild(el("p", { cls: "muted", text: "no record links to this item" }));
  });
  function all() { list.show(j.disagreements, plural(j.disagreements.length, "disagreement")); }
  card.appendChild(el("h3", { text: "confusion matrix (rows: human majority, columns: judge; a click on a cell lists its items)" }));
  card.appendChild(confusionTable(j.confusion, "human", "judge", function (r, c) {
    var got = cellRows(j, r, c); list.show(got[0], got[1], all);
  }));
  var cols = j.per_class.length ? Object.keys(j.per_class[0]) : [];
  card.appendChild(gridTable(cols, j.per_class.map(function (r) { return cols.map(function (c) { return r[c]; }); }), null, null,
    cols.map(words)));
  all();
  card.appendChild(list);
  card.appendChild(pane);
}

function renderHumans() {
  var H = DATA.humans, root = clear(document.getElementById("tab-humans"));
  root.appendChild(el("div", { cls: "card" }, [el("h2", { text: "judges vs humans" }), kvTable([
    ["human labels", H.path], ["human raters", (H.raters_scored || H.raters).join(", ")], ["items", H.n_items],
    ["items whose human votes tie", H.n_ties, "n_ties"], ["tie policy", H.tie_policy]]),
    (H.left_out || []).length ? notesList(H.left_out) : null,
    el("h3", { text: "every judge side by side" }), summaryTable("judges", HUMAN_COLUMNS, H.judges, function (k) {
      var card = root.querySelector('.card[data-source="' + H.judges[k].source + '"]');
      if (card) card.scrollIntoView({ block: "start" });
    })]));
  H.judges.forEach(function (j) { renderJudge(root, j); });
}
