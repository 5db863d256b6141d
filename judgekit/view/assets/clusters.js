/* judgekit view, compare mode with --labels: the judges' rank clusters against the human
   majority (DATA.clusters, from judgekit/view/clusters.py), a card at the top of the Compare
   tab, drawn by start() after the tab. Every string is inserted as text. */
function renderClusters() {
  var C = DATA.clusters, root = document.getElementById("tab-compare");
  if (!C || !root) return;
  var card = el("div", { cls: "card", id: "clusters" }, [el("h2", { text: "rank clusters against the human majority" })]);
  root.insertBefore(card, root.firstChild);
  if (C.note) { card.appendChild(el("p", { cls: "warn", text: C.note })); return; }
  card.appendChild(el("p", { cls: "muted", text: C.n_items + " items labelled by the humans and every judge; " +
    "value [95% bootstrap CI] #cluster: judges in cluster #1 are not significantly worse than any other " +
    "(paired permutation tests, alpha 0.05, as judgekit calibrate compare)." }));
  var cell = {}, order = [];
  C.rows.forEach(function (r) {
    cell[r.source + "|" + r.statistic] = r;
    if (order.indexOf(r.source) < 0) order.push(r.source);
  });
  var head = el("tr", {}, [el("th", { text: "judge" })].concat(C.statistics.map(function (s) { return el("th", { text: s }); })));
  var body = el("tbody", {}, order.map(function (src) {
    return el("tr", { data: { source: src } }, [el("td", { text: DATA.sources[src].name })].concat(C.statistics.map(function (s) {
      var r = cell[src + "|" + s];
      if (!r) return el("td", { text: "-" });
      return el("td", { cls: "num", data: { statistic: s, rank: r.rank === null ? "" : r.rank },
        text: fmtCI({ value: r.value, ci: r.ci }) + (r.rank === null ? "" : " #" + r.rank) });
    })));
  }));
  card.appendChild(el("table", { cls: "clusters" }, [el("thead", {}, [head]), body]));
}
