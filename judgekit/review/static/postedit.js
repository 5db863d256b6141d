/* judgekit review page: post-editing of LLM localisations (Cultivar, paper 000, Fig. 1).
 * Per side, the original and the edit box (pre-filled with the LLM paraphrase), the changed
 * words highlighted by jsdiff's word diff (diffWords over Intl.Segmenter words) and counted
 * (removed + added tokens), updated while typing. Accept (a) puts the LLM version back, revert (r) the original; "Confirm final version"
 * (Enter) freezes the item. */
(function () {
  "use strict";
  var el = JK.el, D = JK.DATA;
  var SIDES = ["source", "english"];

  /* Words by the browser's Intl.Segmenter (ICU: words of Devanagari, Chinese, Thai...), which
   * jsdiff's diffWords takes as its tokenizer; jsdiff's own regex splits Indic words at their
   * vowel signs. A count is the changed tokens (words and punctuation) removed plus added. */
  var SEG = (typeof Intl !== "undefined" && Intl.Segmenter) ? new Intl.Segmenter(undefined, { granularity: "word" }) : null;
  function words(s) {
    if (!SEG) return s.split(/\s+/).filter(Boolean).length;
    return Array.from(SEG.segment(s)).filter(function (x) { return x.segment.trim() !== ""; }).length;
  }
  function diff(a, b) { return SEG ? Diff.diffWords(a, b, { intlSegmenter: SEG }) : Diff.diffWordsWithSpace(a, b); }
  function count(parts) {
    return parts.reduce(function (n, p) { return n + (p.added || p.removed ? words(p.value) : 0); }, 0);
  }
  function norm(s) { return s.split(/\s+/).filter(Boolean).join(" "); }
  function status(it, a) {
    var st = SIDES.map(function (s) {
      if (norm(a[s]) === norm(it.data.llm[s])) return "kept";
      return norm(a[s]) === norm(it.data.original[s]) ? "reverted" : "edited";
    });
    if (st.every(function (x) { return x === "kept"; })) return "kept";
    return SIDES.every(function (s) { return norm(a[s]) === norm(it.data.original[s]); }) ? "reverted" : "edited";
  }
  function paint(box, parts, keep) {
    box.textContent = "";
    parts.forEach(function (p) {
      if (p.added && keep === "added") box.appendChild(el("ins", { text: p.value }));
      else if (p.removed && keep === "removed") box.appendChild(el("del", { text: p.value }));
      else if (!p.added && !p.removed) box.appendChild(document.createTextNode(p.value));
    });
  }

  JK.tasks.postedit = {
    initial: function (it) { return { source: it.data.llm.source, english: it.data.llm.english, confirmed: false }; },
    counter: function () {
      var reviewed = 0, revised = 0;
      D.items.forEach(function (it) {
        var e = JK.entry(it);
        if (e.done) { reviewed++; if (status(it, e.answer) !== "kept") revised++; }
      });
      return reviewed + " / " + D.items.length + " reviewed · " + revised + " revised pairs";
    },
    render: function (it, e, card) {
      var d = it.data;
      card.appendChild(el("div", { cls: "label", text: [d.locale, d.model, "pair " + d.pair].filter(Boolean).join(" · ") }));
      var grid = el("div", { cls: "sides" });
      SIDES.forEach(function (side) {
        var orig = el("div", { cls: "text original", dir: "auto", "data-side": side });
        var now = el("div", { cls: "text current", dir: "auto", "data-side": side });
        var n = el("span", { cls: "count", "data-side": side });
        var box = el("textarea", { cls: "edit", dir: "auto", rows: "3", "data-side": side });
        box.value = e.answer[side];
        box.readOnly = e.done;
        function update() {
          var parts = diff(d.original[side], box.value);
          paint(orig, parts, "removed"); paint(now, parts, "added");
          n.textContent = side + " diff: " + count(parts);
        }
        box.addEventListener("input", function () {
          e.answer[side] = box.value; update(); JK.changed(false); showStatus(it, e);
        });
        update();
        grid.appendChild(el("div", { cls: "side" }, [
          el("div", { cls: "label", text: side + " · original" }), orig,
          el("div", { cls: "label", text: side + " · your version (diff against the original)" }), now,
          box, n
        ]));
      });
      card.appendChild(grid);
      var accept = el("button", { id: "accept", text: "accept LLM version (a)", on: { click: function () { setAll(it, e, d.llm); } } });
      var revert = el("button", { id: "revert", text: "revert to original (r)", on: { click: function () { setAll(it, e, d.original); } } });
      accept.disabled = revert.disabled = e.done;
      var check = el("input", { type: "checkbox", id: "confirm" });
      check.checked = e.done;
      check.addEventListener("change", function () { confirm(e, check.checked); });
      card.appendChild(el("div", { cls: "actions" }, [accept, revert,
        el("label", { cls: "confirm" }, [check, " Confirm final version (Enter)"]),
        el("span", { id: "pe-status", cls: "label" })]));
      showStatus(it, e);
    },
    key: function (ev, it, e) {
      if (ev.key === "Enter") { confirm(e, !e.done); return; }
      if (e.done) return false;
      if (ev.key === "a") { setAll(it, e, it.data.llm); return; }
      if (ev.key === "r") { setAll(it, e, it.data.original); return; }
      if (ev.key === "e") { document.querySelector("textarea.edit").focus(); return; }
      return false;
    },
    editKey: function (ev) {
      if (ev.key === "Enter") { ev.preventDefault(); confirm(JK.entry(), true); }
      else if (ev.key === "Escape") ev.target.blur();
    }
  };

  function showStatus(it, e) {
    var s = document.getElementById("pe-status");
    if (s) s.textContent = "now: " + status(it, e.answer);
  }
  function setAll(it, e, version) {
    SIDES.forEach(function (s) { e.answer[s] = version[s]; });
    JK.changed(false); JK.render();
  }
  function confirm(e, on) {
    e.answer.confirmed = on;
    JK.changed(on); JK.render();
  }
})();
