/* judgekit review page: MQM error spans (after Google's Anthea and WMT's Appraise).
 * Select a span in the translation (or, for an omission, in the source) with the mouse; pick
 * the type (number keys) and the severity (m minor, M major, c critical); Enter adds the error,
 * or confirms the segment when nothing is pending. A span still missing its type or severity
 * is never dropped: Enter (or confirm) keeps it, marks it in the text and asks for what is
 * missing. "No errors" (key 0) is an explicit answer. Offsets are stored in code points with
 * the marked text. */
(function () {
  "use strict";
  var el = JK.el, D = JK.DATA;
  var pending = null;
  var SEV = { m: "minor", M: "major", c: "critical" };

  function typesFor(side) {
    return D.options.types.filter(function (t) { return (t.quote_from === "source") === (side === "source"); });
  }

  function marked(text, spans) {
    /* text split at the span boundaries (code points); covered pieces in <mark> */
    var chars = Array.from(text), cuts = [0, chars.length];
    spans.forEach(function (s) { cuts.push(s.start, s.end); });
    cuts = Array.from(new Set(cuts)).sort(function (a, b) { return a - b; });
    var out = [];
    for (var i = 0; i + 1 < cuts.length; i++) {
      var a = cuts[i], b = cuts[i + 1], piece = chars.slice(a, b).join("");
      var hit = spans.filter(function (s) { return s.start <= a && s.end >= b; });
      if (!piece) continue;
      if (hit.length) {
        var top = hit.filter(function (h) { return h.severity === "pending"; })[0] || hit[0];
        out.push(el("mark", { cls: "sev-" + top.severity, title: hit.map(function (h) { return h.type + " " + h.severity; }).join(", "), text: piece }));
      } else out.push(document.createTextNode(piece));
    }
    return out;
  }

  function selectionIn(box, text) {
    var sel = window.getSelection();
    if (!sel.rangeCount || sel.isCollapsed) return null;
    var range = sel.getRangeAt(0);
    if (!box.contains(range.startContainer) || !box.contains(range.endContainer)) return null;
    var pre = document.createRange();
    pre.selectNodeContents(box);
    pre.setEnd(range.startContainer, range.startOffset);
    var s = pre.toString().length, e = s + range.toString().length;
    if (s > 0 && /[\uD800-\uDBFF]/.test(text.charAt(s - 1))) s -= 1;  /* never split a pair */
    if (e < text.length && /[\uDC00-\uDFFF]/.test(text.charAt(e))) e += 1;
    while (s < e && /\s/.test(text.charAt(s))) s++;
    while (e > s && /\s/.test(text.charAt(e - 1))) e--;
    if (s >= e) return null;
    return { start: JK.u16ToCp(text, s), end: JK.u16ToCp(text, e), text: text.slice(s, e) };
  }

  /* What the pending span still lacks ("a type", "a severity"), or "" when it is complete. */
  function missing() {
    if (!pending) return "";
    var lack = [];
    if (!pending.type) lack.push("a type (number keys)");
    if (!pending.severity) lack.push("a severity (m minor, M major, c critical)");
    return lack.join(" and ");
  }
  function askForRest() {
    JK.render();
    JK.setStatus("the span \u201c" + pending.text + "\u201d needs " + missing() + " before the segment is confirmed (Escape drops it)", true);
    var panel = document.getElementById("pending");
    if (panel) { panel.className += " unfinished"; JK.showFocus(panel); }
  }
  function addPending(e) {
    if (!pending || !pending.type || !pending.severity) return false;
    e.answer.errors.push({ side: pending.side, start: pending.start, end: pending.end, text: pending.text, type: pending.type, severity: pending.severity });
    e.answer.no_errors = false;
    pending = null;
    JK.changed(false); JK.render();
    return true;
  }

  JK.tasks.mqm = {
    initial: function (it) {
      if (D.show_judge && it.judge) return JSON.parse(JSON.stringify(it.judge));
      return { no_errors: false, errors: [] };
    },
    render: function (it, e, card) {
      var d = it.data;
      if (pending && pending.item !== it.id) pending = null;
      card.appendChild(el("div", { cls: "label", text: [d.system, d.doc, d.seg_id, d.locale].filter(Boolean).join(" · ") }));
      ["source", "translation"].forEach(function (side) {
        var text = d[side];
        var spans = e.answer.errors.filter(function (x) { return x.side === side; });
        if (pending && pending.side === side) spans = spans.concat([{ start: pending.start, end: pending.end, type: "new", severity: "pending" }]);
        var box = el("div", { cls: "segment " + side, dir: "auto", "data-side": side }, marked(text, spans));
        box.addEventListener("mouseup", function () {
          if (e.done) return;
          var got = selectionIn(box, text);
          if (!got) return;
          var allowed = typesFor(side);
          pending = { item: it.id, side: side, start: got.start, end: got.end, text: got.text, type: allowed.length === 1 ? allowed[0].id : null, severity: null };
          JK.render();
        });
        card.appendChild(el("div", { cls: "label", text: side === "source" ? "source (select here to mark an omission)" : "translation (select an error span)" }));
        card.appendChild(box);
      });
      if (pending) card.appendChild(pendingPanel(e));
      var list = el("ol", { cls: "errors" });
      e.answer.errors.forEach(function (x, i) {
        list.appendChild(el("li", {}, [
          el("span", { cls: "tag", text: x.type + " · " + x.severity + " · " + x.side + " [" + x.start + ", " + x.end + ") " }),
          JK.textBox("q", x.text),
          e.done ? null : el("button", { cls: "remove", text: "remove", on: { click: function () { e.answer.errors.splice(i, 1); JK.changed(false); JK.render(); } } })
        ]));
      });
      card.appendChild(list);
      var none = el("button", { id: "no-errors", cls: "choice" + (e.answer.no_errors ? " picked" : ""), text: "no errors (0)",
        on: { click: function () { toggleNone(e); } } });
      if (e.answer.errors.length || e.done) none.disabled = true;
      var confirm = el("button", { id: "confirm", cls: "primary", text: e.done ? "reopen" : "confirm segment (Enter)",
        on: { click: function () { confirmSegment(e); } } });
      card.appendChild(el("div", { cls: "actions" }, [none, confirm]));
      if (D.show_judge && it.judge) card.appendChild(el("div", { cls: "judge", text: "pre-filled from the judge's answer" }));
    },
    key: function (ev, it, e) {
      if (e.done && ev.key !== "Enter") return false;
      if (ev.key === "0") { toggleNone(e); return; }
      if (ev.key === "Enter") {
        if (pending && missing()) { askForRest(); return; }
        if (!addPending(e)) confirmSegment(e);
        return;
      }
      if (pending && SEV[ev.key]) { pending.severity = SEV[ev.key]; JK.render(); return; }
      var n = parseInt(ev.key, 10), allowed = pending ? typesFor(pending.side) : [];
      if (pending && !isNaN(n) && n >= 1 && n <= allowed.length) { pending.type = allowed[n - 1].id; JK.render(); return; }
      if (ev.key === "Escape" && pending) { pending = null; JK.render(); return; }
      return false;
    }
  };

  function toggleNone(e) {
    if (e.answer.errors.length || e.done) return;
    e.answer.no_errors = !e.answer.no_errors;
    JK.changed(false); JK.render();
  }
  function confirmSegment(e) {
    if (e.done) { JK.changed(false); JK.render(); return; }
    if (pending && missing()) { askForRest(); return; }
    if (pending) addPending(e);  /* a complete span is added, never dropped */
    if (!e.answer.no_errors && !e.answer.errors.length) {
      document.getElementById("status").textContent = "mark an error, or choose 'no errors', before confirming";
      return;
    }
    JK.changed(true); JK.render();
  }
  function pendingPanel(e) {
    var panel = el("div", { id: "pending", cls: "pending" }, [
      el("span", { cls: "label", text: "new error in the " + pending.side + ": " }), JK.textBox("q", pending.text)
    ]);
    var types = el("div", { cls: "options" });
    typesFor(pending.side).forEach(function (t, i) {
      types.appendChild(el("button", { cls: "choice" + (pending.type === t.id ? " picked" : ""), "data-type": t.id, title: t.definition,
        on: { click: function () { pending.type = t.id; JK.render(); } } }, [el("kbd", { text: String(i + 1) }), " " + t.id + " " + t.name]));
    });
    var sev = el("div", { cls: "options" });
    D.options.severities.forEach(function (s) {
      var k = { minor: "m", major: "M", critical: "c" }[s.id];
      sev.appendChild(el("button", { cls: "choice" + (pending.severity === s.id ? " picked" : ""), "data-severity": s.id, title: s.definition,
        on: { click: function () { pending.severity = s.id; JK.render(); } } }, [el("kbd", { text: k }), " " + s.id]));
    });
    panel.appendChild(types); panel.appendChild(sev);
    var chosen = D.options.types.filter(function (t) { return t.id === pending.type; })[0];
    if (chosen) panel.appendChild(el("div", { cls: "label", text: chosen.id + " (" + chosen.name + "; " + chosen.group + "): " + chosen.definition }));
    panel.appendChild(el("button", { id: "add-error", cls: "primary", text: "add error (Enter)", on: { click: function () { addPending(e); } } }));
    return panel;
  }
})();
