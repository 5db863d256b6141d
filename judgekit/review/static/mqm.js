/* judgekit review page: MQM error spans (after Google's Anthea and WMT's Appraise).
 * Select a span in the translation (or, for an omission, in the source) with the mouse, or with
 * the keyboard, word by word as in Anthea: w puts a word cursor in the translation (Tab: the
 * other side), ArrowLeft / ArrowRight move it, Shift+ArrowLeft / Shift+ArrowRight move the
 * span's end, Space makes it the new error. Pick the type (number keys) and the severity
 * (m minor, M major, c critical); Enter adds the error, or confirms the segment when nothing is
 * pending. e focuses the next marked error: Space takes it back to edit (keys as for a new one;
 * Escape puts it back unchanged), x removes it. A span still missing its type or severity is
 * never dropped: Enter (or confirm) keeps it, marks it in the text and asks for what is
 * missing, and leaving the item asks to add it or discard it (core.js). "No errors" (key 0)
 * is an explicit answer. Offsets are stored in code points with the marked text. */
(function () {
  "use strict";
  var el = JK.el, D = JK.DATA;
  var pending = null;
  var cursor = null;  /* keyboard word cursor: { item, side, a, b } word indexes, a <= b */
  var picked = -1;  /* the marked error focused with e */
  var SEG = (typeof Intl !== "undefined" && Intl.Segmenter) ? new Intl.Segmenter(undefined, { granularity: "word" }) : null;
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
        var top = hit.filter(function (h) { return h.severity === "pending"; })[0] ||
          hit.filter(function (h) { return h.severity === "cursor"; })[0] || hit[0];
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
    var at = pending.at === undefined ? e.answer.errors.length : pending.at;
    e.answer.errors.splice(at, 0, { side: pending.side, start: pending.start, end: pending.end, text: pending.text, type: pending.type, severity: pending.severity });
    e.answer.no_errors = false;
    pending = null; cursor = null;
    JK.changed(false); JK.render();
    return true;
  }
  /* Drop the pending span; an error taken back to edit goes back unchanged. */
  function dropPending(e) {
    if (pending && pending.original) e.answer.errors.splice(pending.at, 0, pending.original);
    pending = null; cursor = null;
    JK.render();
  }

  /* The words of a text (Intl.Segmenter; spaces skipped), as [start, end) in UTF-16 units. */
  function words(text) {
    var out = [];
    if (SEG) {
      Array.from(SEG.segment(text)).forEach(function (w) {
        if (w.segment.trim()) out.push([w.index, w.index + w.segment.length]);
      });
    } else {
      var re = /\S+/g, m;
      while ((m = re.exec(text))) out.push([m.index, m.index + m[0].length]);
    }
    return out;
  }
  function cursorSpan(it) {
    var text = it.data[cursor.side], ws = words(text), s = ws[cursor.a][0], e = ws[cursor.b][1];
    return { start: JK.u16ToCp(text, s), end: JK.u16ToCp(text, e), text: text.slice(s, e) };
  }
  function setCursor(it, side, start) {
    var ws = words(it.data[side]);
    if (!ws.length) return;
    var a = 0;
    if (start !== undefined) ws.forEach(function (w, i) { if (JK.u16ToCp(it.data[side], w[0]) <= start) a = i; });
    cursor = { item: it.id, side: side, a: a, b: a };
  }
  function moveCursor(it, ev) {
    var n = words(it.data[cursor.side]).length, step = ev.key === "ArrowRight" ? 1 : -1;
    if (ev.shiftKey) cursor.b = Math.max(cursor.a, Math.min(n - 1, cursor.b + step));
    else { cursor.a = Math.max(0, Math.min(n - 1, cursor.a + step)); cursor.b = cursor.a; }
    if (pending && pending.keyboard) {
      var got = cursorSpan(it);
      pending.start = got.start; pending.end = got.end; pending.text = got.text;
    }
  }
  function newPending(it, side, got, keyboard) {
    var allowed = typesFor(side);
    pending = { item: it.id, side: side, start: got.start, end: got.end, text: got.text, keyboard: keyboard,
      type: allowed.length === 1 ? allowed[0].id : null, severity: null };
  }
  /* The marked errors by keyboard: e focuses the next, Space takes it back to edit, x removes
   * it. */
  function errorKey(ev, it, e) {
    var n = e.answer.errors.length;
    if (ev.key === "e" && n) { picked = (picked + 1) % n; JK.render(); return true; }
    if (picked < 0 || picked >= n || pending) return false;
    if (ev.key === "x") { e.answer.errors.splice(picked, 1); picked = -1; JK.changed(false); JK.render(); return true; }
    if (ev.key === " ") {
      var err = e.answer.errors.splice(picked, 1)[0];
      pending = { item: it.id, side: err.side, start: err.start, end: err.end, text: err.text, type: err.type,
        severity: err.severity, keyboard: true, original: err, at: picked };
      setCursor(it, err.side, err.start);
      var ws = words(it.data[err.side]);
      ws.forEach(function (w, i) { if (i >= cursor.a && JK.u16ToCp(it.data[err.side], w[1]) <= err.end) cursor.b = i; });
      picked = -1; JK.render(); return true;
    }
    if (ev.key === "Escape") { picked = -1; JK.render(); return true; }
    return false;
  }

  JK.tasks.mqm = {
    initial: function (it) {
      if (D.show_judge && it.judge) return JSON.parse(JSON.stringify(it.judge));
      return { no_errors: false, errors: [] };
    },
    render: function (it, e, card) {
      var d = it.data;
      if (pending && pending.item !== it.id) pending = null;
      if (cursor && cursor.item !== it.id) cursor = null;
      if (picked >= e.answer.errors.length) picked = -1;
      card.appendChild(el("div", { cls: "label", text: [d.system, d.doc, d.seg_id, d.locale].filter(Boolean).join(" · ") }));
      ["source", "translation"].forEach(function (side) {
        var text = d[side];
        var spans = e.answer.errors.filter(function (x) { return x.side === side; });
        if (pending && pending.side === side) spans = spans.concat([{ start: pending.start, end: pending.end, type: "new", severity: "pending" }]);
        if (cursor && cursor.side === side && !(pending && pending.keyboard)) {
          var c = cursorSpan(it);
          spans = spans.concat([{ start: c.start, end: c.end, type: "cursor", severity: "cursor" }]);
        }
        var box = el("div", { cls: "segment " + side, dir: "auto", "data-side": side }, marked(text, spans));
        box.addEventListener("mouseup", function () {
          if (e.done) return;
          var got = selectionIn(box, text);
          if (!got) return;
          if (pending && pending.original) dropPending(e);
          cursor = null;
          newPending(it, side, got, false);
          JK.render();
        });
        card.appendChild(el("div", { cls: "label", text: side === "source" ? "source (select here to mark an omission)" : "translation (select an error span)" }));
        card.appendChild(box);
      });
      if (pending) card.appendChild(pendingPanel(e));
      var list = el("ol", { cls: "errors" });
      e.answer.errors.forEach(function (x, i) {
        list.appendChild(el("li", { cls: i === picked ? "focus" : "" }, [
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
    /* Unfinished work that blocks leaving the item (core.js asks: add it, discard it, stay). */
    pending: function () {
      if (!pending) return null;
      return {
        text: "The error span \u201c" + pending.text + "\u201d is not added yet", canAdd: !missing(), missing: missing(),
        add: function () { if (missing()) { askForRest(); return false; } return addPending(JK.entry()); },
        discard: function () { dropPending(JK.entry()); }
      };
    },
    /* Keys read before the page's own (j, k, the arrows): the word cursor and the marked errors. */
    firstKey: function (ev, it, e) {
      if (e.done) return false;
      var tag = document.activeElement ? document.activeElement.tagName : "";
      if ((ev.key === "w" || ev.key === "e") && tag === "BUTTON") document.activeElement.blur();  /* Space marks, not presses */
      if (ev.key === "w" && !ev.shiftKey) {
        setCursor(it, cursor && cursor.side === "translation" ? "source" : "translation");
        JK.render(); return;
      }
      if (errorKey(ev, it, e)) return;
      if (!cursor) return false;
      if (ev.key === "Tab") {
        if (pending && pending.keyboard) return;  /* the span stays on its side */
        setCursor(it, cursor.side === "translation" ? "source" : "translation"); JK.render(); return;
      }
      if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") { moveCursor(it, ev); JK.render(); return; }
      if (ev.key === " " && !pending) { newPending(it, cursor.side, cursorSpan(it), true); JK.render(); return; }
      if (ev.key === "Escape" && !pending) { cursor = null; JK.render(); return; }
      return false;
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
      if (ev.key === "Escape" && pending) { dropPending(e); return; }
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
