/* judgekit view, with --labels and records with label_probs: one "Confidence" card per judge
   (DATA.confidence, from judgekit/view/confidence.py: the figures judgekit calibrate judge
   computes) right after the judge's card in the Judge vs humans tab. The reliability diagram
   is an inline SVG built by DOM calls from the bins; every string is inserted as text. */
var SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs, children) {
  var node = document.createElementNS(SVG_NS, tag);
  Object.keys(attrs || {}).forEach(function (k) {
    if (k === "text") node.textContent = String(attrs[k]);
    else node.setAttribute(k, String(attrs[k]));
  });
  (children || []).forEach(function (c) { if (c) node.appendChild(c); });
  return node;
}

function edge(x) { return String(Number(x.toFixed(4))); }  // a bin edge: 0.1, not 0.1000

function binName(b) { return (b.bin === 0 ? "[" : "(") + edge(b.low) + ", " + edge(b.high) + "]"; }

/* Accuracy per bin (bars), each bin's (mean confidence, accuracy) (points), the diagonal of
   perfect calibration; x and y on [0, 1] (Guo et al., ICML 2017, Fig. 1). */
function reliabilitySvg(C) {
  var W = 360, H = 300, L = 48, R = 12, T = 14, B = 42, w = W - L - R, h = H - T - B;
  function x(v) { return L + v * w; }
  function y(v) { return T + (1 - v) * h; }
  var svg = svgEl("svg", { "class": "reliability", width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img",
    "aria-label": "reliability diagram: accuracy against the human majority per bin of top-label confidence" });
  svg.appendChild(svgEl("rect", { x: L, y: T, width: w, height: h, fill: "#fff", stroke: "#d9dee7" }));
  [0, 0.2, 0.4, 0.6, 0.8, 1].forEach(function (v) {
    svg.appendChild(svgEl("line", { x1: x(v), y1: y(0), x2: x(v), y2: y(0) + 4, stroke: "#667085" }));
    svg.appendChild(svgEl("text", { "class": "tick", x: x(v), y: y(0) + 16, "text-anchor": "middle", text: edge(v) }));
    svg.appendChild(svgEl("line", { x1: x(0) - 4, y1: y(v), x2: x(0), y2: y(v), stroke: "#667085" }));
    svg.appendChild(svgEl("text", { "class": "tick", x: x(0) - 7, y: y(v) + 4, "text-anchor": "end", text: edge(v) }));
  });
  C.bins.forEach(function (b) {
    if (!b.n) return;
    svg.appendChild(svgEl("rect", { "class": "bar", x: x(b.low), y: y(b.accuracy), width: x(b.high) - x(b.low),
      height: y(0) - y(b.accuracy), fill: "#2454c4", "fill-opacity": 0.55, stroke: "#1d2330",
      "data-bin": b.bin, "data-n": b.n, "data-accuracy": b.accuracy }, [svgEl("title", { text: binName(b) +
      ": " + plural(b.n, "item") + ", mean confidence " + fmt(b.mean_confidence) + ", accuracy " + fmt(b.accuracy) })]));
  });
  svg.appendChild(svgEl("line", { "class": "diagonal", x1: x(0), y1: y(0), x2: x(1), y2: y(1), stroke: "#667085",
    "stroke-dasharray": "5 4" }));
  C.bins.forEach(function (b) {
    if (b.n) svg.appendChild(svgEl("circle", { "class": "point", cx: x(b.mean_confidence), cy: y(b.accuracy), r: 4,
      fill: "#f08c2b", stroke: "#1d2330", "data-bin": b.bin }));
  });
  svg.appendChild(svgEl("text", { "class": "axis", x: L + w / 2, y: H - 6, "text-anchor": "middle",
    text: "top-label confidence (" + C.n_bins + " equal-width bins)" }));
  svg.appendChild(svgEl("text", { "class": "axis", x: 12, y: T + h / 2, "text-anchor": "middle",
    transform: "rotate(-90 12 " + (T + h / 2) + ")", text: "accuracy vs human majority" }));
  return svg;
}

function confidenceCard(C) {
  var card = el("div", { cls: "card confidence", data: { confidence: C.source } }, [el("h2", { text: "Confidence: " + C.name })]);
  if (C.note) { card.appendChild(el("p", { cls: "warn", text: C.note })); return card; }
  card.appendChild(el("p", { cls: "muted", text: "The judge's label probabilities (label_probs) against the human majority, " +
    "as judgekit calibrate judge computes them: ECE (Guo et al. 2017) and the multiclass Brier score with 95% " +
    "bootstrap CIs over items; " + C.binning + "." }));
  card.appendChild(kvTable([
    ["items scored", C.n_items, "confidence.n_items"], ["labels", C.labels],
    ["expected calibration error [95% CI]", fmtCI(C.ece), "confidence.ece"],
    ["Brier score (0 best, 2 worst) [95% CI]", fmtCI(C.brier), "confidence.brier"],
    ["accuracy of the most probable label", C.accuracy, "confidence.accuracy"],
    ["items whose most probable label is not the judge's label", C.n_argmax_differs === null ? undefined : C.n_argmax_differs],
    ["items left out: human votes tie", C.n_ties], ["items left out: human majority outside the label set", C.n_outside]
  ]));
  var figure = el("figure", { cls: "reliability" });
  figure.appendChild(reliabilitySvg(C));
  figure.appendChild(el("figcaption", { cls: "muted", text: "reliability diagram: bars are each bin's accuracy, points its " +
    "(mean confidence, accuracy), the dashed line perfect calibration" }));
  var side = el("div", { cls: "panes" }, [figure]);
  var binsBox = el("div", {}, [el("h3", { text: "accuracy per confidence bin" }), gridTable(["bin", "n", "mean_confidence", "accuracy"],
    C.bins.map(function (b) { return [binName(b), b.n, b.mean_confidence, b.accuracy]; }), null, null,
    ["confidence bin", "items", "mean confidence", "accuracy"])]);
  binsBox.lastChild.classList.add("bins");
  var selBox = el("div", {}, [el("h3", { text: "selective judging (the judge abstains below the threshold)" }),
    gridTable(["threshold", "n", "share", "accuracy"], C.selective.map(function (s) { return [s.threshold, s.n, s.share, s.accuracy]; }),
      null, null, ["confidence \u2265", "items kept", "share of items", "accuracy of the kept items"])]);
  selBox.lastChild.classList.add("selective");
  side.appendChild(el("div", {}, [binsBox, selBox]));
  card.appendChild(side);
  return card;
}

function renderConfidence() {
  var root = document.getElementById("tab-humans");
  if (!root || !DATA.confidence) return;
  DATA.confidence.forEach(function (C) {
    var card = confidenceCard(C), after = root.querySelector('.card[data-source="' + C.source + '"]');
    if (after) root.insertBefore(card, after.nextSibling); else root.appendChild(card);
  });
}
