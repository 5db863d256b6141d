/* judgekit review page: the labelling tasks, meanings (paper 002) and csca (paper 001).
 * Number keys answer the focused question, ArrowUp / ArrowDown move the focus, Enter goes to
 * the next item. An item is done when every question has an answer. A task's check(answer)
 * flags an answer that contradicts the rule shown on the page (CS/CA): the flag is on the item
 * and holds the rater once before they move on; moving on again keeps the answer. */
(function () {
  "use strict";
  var el = JK.el, textBox = JK.textBox, D = JK.DATA;
  var focus = 0;

  function choiceRow(q, qi, value, onPick) {
    var row = JK.el("div", { cls: "question" + (qi === focus ? " focus" : ""), "data-question": q.id });
    row.appendChild(el("div", { cls: "qtitle", text: q.title }));
    if (q.extra) row.appendChild(q.extra);
    var opts = el("div", { cls: "options" });
    q.options.forEach(function (o, oi) {
      var picked = value === o.value;
      opts.appendChild(el("button", {
        cls: "choice" + (picked ? " picked" : ""), "data-value": String(o.value), title: o.definition || "",
        on: { click: function () { focus = qi; onPick(o.value); } }
      }, [el("kbd", { text: String(oi + 1) }), " " + o.label]));
    });
    row.appendChild(opts);
    return row;
  }

  function labelTask(spec) {
    var check = spec.check || function () { return null; };
    return {
      initial: spec.initial,
      enter: function () { focus = 0; },
      leave: function (it, e) {
        var problem = check(e.answer);
        if (!problem || e.ack === JSON.stringify(e.answer)) return null;
        e.ack = JSON.stringify(e.answer);  /* flagged once: moving on again keeps the answer */
        return problem.text + " Change the answer, or move on again to keep it.";
      },
      render: function (it, e, card) {
        if (focus >= spec.questions(it).length) focus = 0;
        spec.show(it, card);
        var qs = spec.questions(it), problem = check(e.answer);
        if (problem) card.appendChild(el("div", { id: "rule-flag", cls: "rule-flag", role: "alert", text: problem.text }));
        var focused = null;
        qs.forEach(function (q, qi) {
          var row = choiceRow(q, qi, spec.get(e.answer, q, qi), function (v) { pick(it, e, qi, v); });
          if (problem && problem.questions.indexOf(q.id) >= 0) row.className += " contradicts";
          if (qi === focus) focused = row;
          if (q.defined) {
            var dl = el("dl", { cls: "definitions" });
            q.options.forEach(function (o) {
              dl.appendChild(el("dt", { text: o.label })); dl.appendChild(el("dd", { text: o.definition }));
            });
            row.appendChild(dl);
          }
          if (D.show_judge && it.judge) {
            row.appendChild(el("div", { cls: "judge", text: "judge: " + String(spec.get(it.judge, q, qi)) }));
          }
          card.appendChild(row);
        });
        if (focused) JK.showFocus(focused);
      },
      key: function (ev, it, e) {
        var qs = spec.questions(it);
        if (ev.key === "ArrowDown") { focus = Math.min(qs.length - 1, focus + 1); JK.render(); return; }
        if (ev.key === "ArrowUp") { focus = Math.max(0, focus - 1); JK.render(); return; }
        if (ev.key === "Enter") {
          if (complete(it, e)) { if (!e.done) JK.changed(true); JK.go(1); }
          return;
        }
        var n = parseInt(ev.key, 10);
        if (!isNaN(n) && n >= 1 && n <= qs[focus].options.length) { pick(it, e, focus, qs[focus].options[n - 1].value); return; }
        return false;
      }
    };
    function complete(it, e) {
      return spec.questions(it).every(function (q, i) {
        var v = spec.get(e.answer, q, i);
        return v !== null && v !== undefined;
      });
    }
    function pick(it, e, qi, value) {
      var qs = spec.questions(it);
      spec.set(e.answer, qs[qi], qi, value);
      if (qi < qs.length - 1) focus = qi + 1;
      JK.changed(complete(it, e));
      JK.render();
    }
  }

  JK.tasks.meanings = labelTask({
    initial: function (it) {
      var n = it.data.meanings.length;
      var valid = (D.show_judge && it.judge) ? it.judge.valid.slice() : Array(n).fill(null);
      return { valid: valid };
    },
    show: function (it, card) {
      var d = it.data;
      card.appendChild(el("div", { cls: "wordline" }, [
        el("span", { cls: "label", text: "word " }), textBox("strong", d.word),
        el("span", { cls: "label", text: "  translation (" + d.lang + ") " }), textBox("strong", d.translation, "translation")
      ]));
      card.appendChild(el("div", { cls: "label", text: "dictionary entry shown to the judge" }));
      card.appendChild(textBox("pre", d.entry || "(no entry)", "entry"));
    },
    questions: function (it) {
      return it.data.meanings.map(function (m, i) {
        var ex = el("ul", { cls: "examples" });
        (m.examples || []).forEach(function (x) { ex.appendChild(textBox("li", x)); });
        var extra = el("div", {}, [textBox("div", m.meaning, "meaning"), ex]);
        return { id: "m" + i, title: "meaning " + (i + 1), extra: extra,
          options: [{ value: true, label: "valid" }, { value: false, label: "invalid" }] };
      });
    },
    get: function (a, q, i) { return a.valid[i]; },
    set: function (a, q, i, v) { a.valid[i] = v; }
  });

  var CSCA = ["required_knowledge", "time_sensitive", "cs_label", "subject_category"];
  var TITLES = { required_knowledge: "required knowledge", time_sensitive: "time-sensitive",
    cs_label: "culturally sensitive (CS) or agnostic (CA)", subject_category: "subject category" };
  JK.tasks.csca = labelTask({
    initial: function (it) {
      var a = {};
      CSCA.forEach(function (f) { a[f] = (D.show_judge && it.judge) ? it.judge[f] : null; });
      return a;
    },
    show: function (it, card) {
      var d = it.data;
      card.appendChild(el("div", { cls: "label", text: d.benchmark + " · " + d.language + (d.subject ? " · " + d.subject : "") }));
      card.appendChild(textBox("div", d.question, "question-text"));
      var ol = el("ol", { cls: "mcq", type: "A", dir: "auto" });
      d.choices.forEach(function (c) { ol.appendChild(textBox("li", c)); });
      card.appendChild(ol);
      card.appendChild(el("div", { cls: "rule", text: "rule: " + D.options.cs_rule }));
    },
    questions: function () {
      return CSCA.map(function (f) {
        return { id: f, title: TITLES[f], defined: true, options: D.options[f].map(function (o) {
          return { value: o.id, label: o.id, definition: o.definition };
        }) };
      });
    },
    get: function (a, q) { return a[q.id]; },
    set: function (a, q, i, v) { a[q.id] = v; },
    check: function (a) {  /* the rule: CS exactly when the required knowledge implies CS */
      var kind = D.options.required_knowledge.filter(function (o) { return o.id === a.required_knowledge; })[0];
      if (!kind || !kind.cs || !a.cs_label || kind.cs === a.cs_label) return null;
      return { questions: ["required_knowledge", "cs_label"], text: "Contradicts the rule: required knowledge \u201c" +
        kind.id + "\u201d means " + kind.cs + ", but the answer is " + a.cs_label + " (rule: " + D.options.cs_rule + ")." };
    }
  });
})();
