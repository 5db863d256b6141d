/* judgekit view, part 3 of 5: what a record judged, shown in the detail pane (and so in compare
   and judge vs humans): the classified text, the pairwise instruction with both outputs and the
   verdicts, the MQM segment with its spans, the spilling entry and meanings; the human votes;
   one-line summaries of an item for the lists. */
var SEVERITY = { minor: 1, major: 2, critical: 3 };

function metaOf(run, i) {
  var t = table(run), out = {}, rest = t.meta(i);
  t.rows.facets.forEach(function (f) { if (f.indexOf("meta.") === 0) out[f.slice(5)] = t.cat(f, i); });
  Object.keys(rest).forEach(function (k) { out[k] = rest[k]; });
  return out;
}

/* A labelled unit as [item id, meaning index or -1]: spilling labels one unit per meaning,
   "<item>|m<i>", numbered 1-5 on the page as in the review page. */
function unitParts(run, unit) {
  var m = DATA.runs[run].pipeline === "spilling" ? /^(.*)\|m(\d+)$/.exec(String(unit)) : null;
  return m ? [m[1], Number(m[2])] : [String(unit), -1];
}
function unitName(run, unit) {
  var p = unitParts(run, unit);
  return p[1] >= 0 ? p[0] + " \u00b7 meaning " + (p[1] + 1) : p[0];
}

/* The item in a few words, for a list row (its full text is in the detail pane). */
function itemSnippet(run, unit, row) {
  var x = DATA.runs[run].extras, id = unitParts(run, unit)[0], text = "";
  if (x.items && x.items[id] !== undefined) text = typeof x.items[id] === "string" ? x.items[id] : x.items[id].input || "";
  else if (x.segments && x.segments[id]) text = x.segments[id].translation || "";
  else if (DATA.runs[run].pipeline === "spilling" && row >= 0) {
    var meta = metaOf(run, row);
    text = meta.word + " \u2192 " + meta.translation + " (" + meta.lang + ")";
  }
  text = String(text === null || text === undefined ? "" : text).replace(/\s+/g, " ").trim();
  return text.length > 90 ? text.slice(0, 89) + "\u2026" : text;
}

function humanVotes(item, meaning) {
  var H = DATA.humans;
  if (!H) return null;
  var key = meaning === undefined || meaning < 0 ? item : item + "|m" + meaning;
  var votes = H.votes[key];
  if (!votes) return null;
  var majority = H.majority[key];
  return el("div", { cls: "votes", data: { unit: key } }, [el("span", { cls: "muted", text: "human votes: " })].concat(
    votes.map(function (v) { return el("span", { cls: "chip vote", data: { rater: v[0] }, text: v[0] + " " + v[1] }); }),
    [el("span", { cls: "muted", text: " majority: " + (majority === "<tie>" ? "tie" : majority) })]));
}

function meaningsBox(meanings, verdicts, disputed, item) {
  var box = el("div", { cls: "meanings" }, [el("h3", { text: "the 5 meanings" + (verdicts ? " and the judge's verdicts" : "") })]);
  verdicts = Array.isArray(verdicts) ? verdicts : null;  // shapes as no judgekit run writes them
  (Array.isArray(meanings) ? meanings : []).forEach(function (m, k) {
    if (m === null || typeof m !== "object") return;
    var v = verdicts ? verdicts[k] : undefined;
    var cls = "meaning" + (v === true ? " valid" : v === false ? " invalid" : "") + (k === disputed ? " disputed" : "");
    box.appendChild(el("div", { cls: cls, data: { meaning: k + 1 } }, [
      v === undefined ? null : el("span", { cls: "verdict", text: v ? "valid \u2713 " : "invalid \u2717 " }),
      el("span", { text: (k + 1) + ". " + m.meaning }),
      k === disputed ? el("span", { cls: "chip disputed-tag", text: "disputed" }) : null,
      el("div", { cls: "muted", text: (Array.isArray(m.examples) ? m.examples : []).join(" \u00b7 ") }),
      item === undefined ? null : humanVotes(item, k)]));
  });
  return box;
}

function spillingContext(run, i, parsed, opts) {
  var t = table(run), x = DATA.runs[run].extras, meta = metaOf(run, i), stage = t.cat("stage", i);
  if (stage !== "judge" && stage !== "generate") return null;
  var entry = x.dictionary[meta.lang + "|" + meta.translation];
  var gen = stage === "judge" ? x.generation[i] : i;
  var meanings = gen !== undefined && t.cat("status", gen) === "ok" ? (t.parsed(gen) || {}).meanings : null;
  var verdicts = stage === "judge" && parsed ? parsed.valid : null;
  var disputed = opts.unit !== undefined ? unitParts(run, opts.unit)[1] : -1;
  var left = el("div", {}, [el("h3", { text: "dictionary entry (" + meta.lang + ")" }),
    el("pre", { cls: "dictionary", text: entry || "(no entry for " + meta.translation + ")" })]);
  if (x.dictionary_note) left.appendChild(el("p", { cls: "warn", text: x.dictionary_note }));
  return el("div", { cls: "side-by-side spilling" }, [left, meaningsBox(meanings, verdicts, disputed, t.text("item", i))]);
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
    el("h3", { text: "translation with the judge's spans (" + plural(errors.length, "error") + ", MQM " + fmt(seg.mqm) + ")" }),
    spanText(seg.translation, errors, "translation"),
    el("div", { cls: "legend" }, [el("span", {}, [el("mark", { cls: "minor", text: "minor" })]),
      el("span", {}, [el("mark", { cls: "major", text: "major" })]), el("span", {}, [el("mark", { cls: "critical", text: "critical" })])]),
    el("h3", { text: "source" }), spanText(seg.source, errors, "source")]);
}

function itemsNote(x) { return x.items_note ? el("p", { cls: "warn", text: x.items_note }) : null; }

function classifyContext(run, i) {
  var x = DATA.runs[run].extras, text = x.items[table(run).text("item", i)];  // item id -> its text
  if (text === undefined) return itemsNote(x) || el("p", { cls: "muted", text: "(the item is not in the run's items.jsonl)" });
  return el("div", { cls: "item-context" }, [el("h3", { text: "the text the judge classified" }),
    longText("pre", text, "item-text"), itemsNote(x)]);
}

/* Both outputs side by side, in their original identities (output 1, output 2), the one this
   record's verdict picked marked, with the order the judge saw them in; then the verdicts of
   both orders and the resolved verdict of the pair (verdicts.csv). */
function pairwiseContext(run, i, parsed) {
  var t = table(run), x = DATA.runs[run].extras, meta = metaOf(run, i), id = t.text("item", i), item = x.items[id];
  if (!item) return itemsNote(x) || el("p", { cls: "muted", text: "(the item is not in the run's items.jsonl)" });
  var swapped = meta.order === "swapped", picked = t.cat("label", i);  // "output 1" / "output 2" / "tie"
  var sides = ["1", "2"].map(function (k) {
    var shown = (k === "1") !== swapped ? "(a)" : "(b)", won = picked === "output " + k;
    return el("div", { cls: "output" + (won ? " winner" : ""), data: { output: k } }, [
      el("h3", { text: "output " + k + " \u00b7 shown as Output " + shown + (item.gold === k ? " \u00b7 gold" : "") }),
      won ? el("p", { cls: "verdict", text: "\u2713 this record's verdict" }) : null,
      longText("pre", item["output_" + k], "output-text")]);
  });
  var v = x.verdicts[t.cat("model", i) + "|" + id] || {};
  var name = function (s) { return s === null || s === undefined ? "\u2013" : s === "tie" ? "tie" : "output " + s; };
  return el("div", { cls: "item-context pairwise" }, [
    el("h3", { text: "instruction" }), longText("pre", item.input, "instruction"),
    el("div", { cls: "side-by-side outputs" }, sides),
    el("p", { cls: "pair-verdicts" }, [
      "this order (" + meta.order + "): ", el("strong", { text: picked === null ? "no verdict" : picked }),
      " \u00b7 original order: " + name(v.original) + " \u00b7 swapped order: " + name(v.swapped) + " \u00b7 ",
      el("strong", { cls: "resolved", text: "resolved: " + name(v.resolved) + (v.status ? " (" + v.status + ")" : "") }),
      " \u00b7 gold: " + name(item.gold)]),
    itemsNote(x)]);
}

function pipelineContext(run, i, parsed, opts) {
  var p = DATA.runs[run].pipeline, x = DATA.runs[run].extras;
  if (p === "spilling") return spillingContext(run, i, parsed, opts);
  if (p === "errors") return errorsContext(run, i);
  if (p === "classify" && x.items) return classifyContext(run, i);
  if (p === "pairwise" && x.items) return pairwiseContext(run, i, parsed);
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
      return [k, a[k]];
    }))]);
  }
  return null;
}
