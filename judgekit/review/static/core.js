/* judgekit review page: shared core (state, autosave, navigation, export / load, keyboard).
 * Every string from a model or an input file is put into the page with textContent, never as
 * HTML. Spans are stored as Unicode code-point offsets (browsers count UTF-16 units).
 * The draft in localStorage carries a revision counter: a tab saves only over the revision it
 * last read or wrote, so two tabs of one page never overwrite each other's work unwarned. */
var JK = (function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("judgekit-data").textContent);
  var KEY = "judgekit:review:" + DATA.campaign + ":" + DATA.rater;
  var tasks = {};
  var state = { current: 0, items: {}, imported: [] };
  var shownAt = Date.now();
  var rev = 0;  /* the draft revision this tab last read or wrote */
  var conflict = null;  /* the newer draft of another tab, while unresolved */

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "cls") node.className = attrs[k];
      else if (k === "on") Object.keys(attrs.on).forEach(function (e) { node.addEventListener(e, attrs.on[e]); });
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }
  function textBox(tag, text, cls) { return el(tag, { dir: "auto", cls: cls || "", text: text }); }

  /* code points <-> UTF-16 units */
  function cpLength(s) { return Array.from(s).length; }
  function u16ToCp(text, u16) { return cpLength(text.slice(0, u16)); }
  function cpToU16(text, cp) { return Array.from(text).slice(0, cp).join("").length; }

  function task() { return tasks[DATA.task]; }
  function item(i) { return DATA.items[i === undefined ? state.current : i]; }
  function entry(it) {
    it = it || item();
    if (!state.items[it.id]) {
      state.items[it.id] = { answer: task().initial(it), done: false, seconds: 0, touched: false };
    }
    return state.items[it.id];
  }

  function exportObject() {
    tick();
    return {
      format: "judgekit-review/1", campaign: DATA.campaign, task: DATA.task, rater: DATA.rater,
      show_judge: DATA.show_judge, exported_at: new Date().toISOString(),
      imported_from: state.imported.slice(),
      items: DATA.items.map(function (it) {
        var e = entry(it);
        return { id: it.id, hash: it.hash, answer: e.answer, done: e.done, seconds: Math.round(e.seconds * 1000) / 1000 };
      })
    };
  }
  function tick() {
    var now = Date.now(), e = entry();
    if (!e.done) e.seconds += (now - shownAt) / 1000;
    shownAt = now;
  }
  function stored() {
    try { var raw = localStorage.getItem(KEY); return raw ? JSON.parse(raw) : null; } catch (err) { return null; }
  }
  function save(force) {
    var other = stored();
    if (!force && other && (other.rev || 0) > rev) { warnConflict(other); return; }
    var items = {};  /* only the items the rater touched: an unopened item stays unstarted */
    Object.keys(state.items).forEach(function (id) {
      var e = state.items[id];
      if (e.touched || e.done) items[id] = { answer: e.answer, done: e.done, seconds: e.seconds, touched: true, ack: e.ack };
    });
    try {
      rev = Math.max(rev, other ? other.rev || 0 : 0) + 1;
      localStorage.setItem(KEY, JSON.stringify({ rev: rev, saved_at: Date.now(), current: state.current, items: items, imported: state.imported }));
      setStatus("saved in this browser at " + new Date().toLocaleTimeString());
      clearConflict(); saveFailed(null);
    } catch (err) {
      saveFailed(err);
    }
  }
  /* A failed autosave stays on screen (not a one-off status) until a later save succeeds or
   * the rater downloads the answers; until then the page asks before it is closed. */
  var unsaved = null;
  function saveFailed(err) {
    var bar = document.getElementById("save-failed");
    if (!err) { unsaved = null; if (bar) bar.remove(); return; }
    unsaved = err.name || "Error";
    if (!bar) {
      bar = el("div", { id: "save-failed", role: "alert" });
      document.querySelector("header").appendChild(bar);
    }
    bar.textContent = "Autosave failed (" + unsaved + ", last try " + new Date().toLocaleTimeString() +
      "): your answers since the last save are only in this tab. Use Download JSON now; this warning stays until a save works.";
    setStatus("autosave failed (" + unsaved + "): use Download JSON now", true);
  }
  /* What would be lost if the page closed now ("" when nothing). */
  function atRisk() {
    var why = [];
    if (unsaved) why.push("autosave failed");
    if (conflict) why.push("not saved: another tab saved this draft");
    var held = task().pending ? task().pending() : null;
    if (held) why.push(held.text);
    return why.join("; ");
  }
  /* Another tab (or window) saved this draft since this tab read it: nothing is written until
   * the rater chooses whose work to keep. */
  function warnConflict(other) {
    conflict = other;
    var bar = document.getElementById("conflict");
    if (!bar) {
      bar = el("div", { id: "conflict", role: "alert" });
      document.querySelector("header").appendChild(bar);
    }
    bar.textContent = "";
    var when = other.saved_at ? new Date(other.saved_at).toLocaleTimeString() : "?";
    bar.appendChild(el("span", { text: "This page is open in another tab or window, which saved this draft at " + when +
      " (revision " + other.rev + "). This tab's changes are not saved. " }));
    bar.appendChild(el("button", { id: "take-other", text: "Load the other tab's work", on: { click: function () {
      state = { current: 0, items: {}, imported: [] };
      restore(); clearConflict(); render(); setStatus("loaded the draft saved by the other tab");
    } } }));
    bar.appendChild(el("button", { id: "keep-mine", text: "Keep this tab's work (overwrite the other)", on: { click: function () {
      clearConflict(); save(true);
    } } }));
    setStatus("not saved: another tab saved this draft", true);
  }
  function clearConflict() {
    conflict = null;
    var bar = document.getElementById("conflict");
    if (bar) bar.remove();
  }
  function setStatus(text, bad) {
    var s = document.getElementById("status");
    s.textContent = text;
    s.className = bad ? "bad" : "";
  }
  function restore() {
    var saved = stored();
    if (!saved || typeof saved !== "object") return false;
    rev = saved.rev || 0;
    merge(saved.items || {});
    state.imported = Array.isArray(saved.imported) ? saved.imported : [];
    state.current = Math.max(0, Math.min(saved.current || 0, DATA.items.length - 1));
    return true;
  }
  /* An item counts as started only when the rater touched it: done, marked touched by this
   * page, or (a downloaded file, an older draft) an answer other than the page's initial one. */
  function merge(items) {
    DATA.items.forEach(function (it) {
      var got = items[it.id];
      if (!got || !got.answer || typeof got.answer !== "object") return;
      var touched = got.touched !== undefined ? !!got.touched :
        !!got.done || JSON.stringify(got.answer) !== JSON.stringify(task().initial(it));
      state.items[it.id] = { answer: got.answer, done: !!got.done, seconds: got.seconds || 0, touched: touched, ack: got.ack };
    });
  }
  /* A downloaded file read back: only a review file of this campaign, task and rater (another
   * rater's file is refused, naming both, unless the rater asks to import it as theirs). */
  function loadFile(file) {
    var reader = new FileReader();
    reader.onload = function () {
      var data;
      try { data = JSON.parse(reader.result); } catch (err) { setStatus(file.name + ": not JSON", true); return; }
      var isFile = data !== null && typeof data === "object" && !Array.isArray(data) && Array.isArray(data.items) &&
        data.items.every(function (r) { return r !== null && typeof r === "object" && !Array.isArray(r); });
      if (!isFile || data.format !== "judgekit-review/1") { setStatus(file.name + ": not a review file", true); return; }
      if (data.campaign !== DATA.campaign || data.task !== DATA.task) {
        setStatus(file.name + ": campaign " + data.campaign + ", not this page's " + DATA.campaign, true);
        return;
      }
      if (data.rater !== DATA.rater) {
        setStatus(file.name + ": the answers of rater " + data.rater + ", not of " + DATA.rater + " (this page's rater): not loaded", true);
        var s = document.getElementById("status");
        s.appendChild(document.createTextNode(" "));
        s.appendChild(el("button", { id: "import-as", text: "Import " + data.rater + "'s answers as " + DATA.rater,
          on: { click: function () { take(data, file.name, true); } } }));
        return;
      }
      take(data, file.name, false);
    };
    reader.readAsText(file);
  }
  /* Each row of a loaded file is checked as `judgekit review import` checks it (the item is in
   * the campaign with the same hash, `done` is true or false, a done answer passes the task's
   * schema: JKCheck), and an unfinished answer must have the draft's shape (the schema's
   * `draft`), so the page can show it; a row that fails is skipped and listed with its reason,
   * never taken. */
  function take(data, name, other) {
    var byId = {}, pages = {}, skipped = [];
    DATA.items.forEach(function (it) { pages[it.id] = it; });
    data.items.forEach(function (r) {
      var it = Object.prototype.hasOwnProperty.call(pages, r.id) ? pages[r.id] : null;
      var why = !it ? "not in this campaign" :
        r.hash !== it.hash ? "changed item (hash " + r.hash + ", this page's " + it.hash + ")" :
        typeof r.done !== "boolean" ? "'done' must be true or false" :
        r.done ? JKCheck.problem(DATA, it, r.answer) : draftProblem(it, r.answer);
      if (why) skipped.push({ id: String(r.id), why: why });
      else byId[r.id] = r;
    });
    merge(byId);
    if (other && state.imported.indexOf(String(data.rater)) < 0) state.imported.push(String(data.rater));
    save(); render();
    setStatus("loaded " + Object.keys(byId).length + " items from " + name + (other ? " (rater " + data.rater + "'s answers, imported as " + DATA.rater + ")" : "") +
      (skipped.length ? "; skipped " + skipped.length + " (listed below)" : ""), skipped.length > 0);
    loadReport(name, skipped);
  }
  function draftProblem(it, answer) {
    var why = JKCheck.problem(DATA, it, answer, true);
    return why ? "unfinished answer, " + why : null;
  }
  function loadReport(name, skipped) {
    var old = document.getElementById("load-report");
    if (old) old.remove();
    if (!skipped.length) return;
    var list = el("ul", {});
    skipped.forEach(function (s) {
      list.appendChild(el("li", {}, [el("code", { dir: "auto", text: s.id }), ": " + s.why]));
    });
    var box = el("div", { id: "load-report", role: "alert" }, [
      el("strong", { text: name + ": " + skipped.length + " item" + (skipped.length > 1 ? "s" : "") + " not loaded (this page keeps its own answer for them)" }),
      el("button", { id: "load-report-close", text: "close", on: { click: function () { box.remove(); } } }), list]);
    document.querySelector("header").appendChild(box);
  }
  function download() {
    var blob = new Blob([JSON.stringify(exportObject(), null, 1)], { type: "application/json" });
    var a = el("a", { href: URL.createObjectURL(blob), download: "judgekit-" + DATA.task + "-" + DATA.campaign + "-" + DATA.rater + ".json" });
    document.body.appendChild(a); a.click(); a.remove();
    if (unsaved) { saveFailed(null); setStatus("downloaded " + a.getAttribute("download") + " (autosave still fails: download again before leaving)", true); return; }
    setStatus("downloaded " + a.getAttribute("download"));
  }

  function changed(done) {
    tick();  /* the time so far counts for this item before it may become done */
    var e = entry();
    e.touched = true;
    if (done !== undefined) e.done = done;
    save(); renderProgress();
  }
  /* Moving to another item: the task may hold the rater once on an answer it flags (an
   * unacknowledged one); the new item starts at its top with its first question focused. */
  function goTo(i) {
    i = Math.max(0, Math.min(DATA.items.length - 1, i));
    var work = task().pending ? task().pending() : null;
    if (work && i !== state.current) { askPending(work, i); return; }
    var held = task().leave ? task().leave(item(), entry()) : null;
    if (held) { save(); render(); setStatus(held, true); return; }
    if (i === state.current) { tick(); save(); render(); return; }
    tick(); state.current = i;
    if (task().enter) task().enter(item());
    save(); render(); toTop();
  }
  function go(delta) { goTo(state.current + delta); }
  /* Unfinished work the task holds (an MQM span not yet added) stops every way of leaving the
   * item (j, k, next, prev, the strip): the rater adds it (when complete) or discards it, or
   * stays. Keys: a add, d discard, Escape stay. */
  var asking = null;
  function askPending(work, target) {
    closePrompt();
    asking = { work: work, target: target };
    var add = el("button", { id: "prompt-add", cls: "primary", text: work.canAdd ? "add it and go on (a)" : "add it (a): needs " + work.missing,
      on: { click: promptAdd } });
    var box = el("div", { id: "pending-prompt", role: "alertdialog", "aria-label": "unfinished work" }, [
      el("span", { text: work.text + ". " }), add,
      el("button", { id: "prompt-discard", text: "discard it and go on (d)", on: { click: promptDiscard } }),
      el("button", { id: "prompt-stay", text: "stay (Escape)", on: { click: closePrompt } })]);
    document.querySelector("header").appendChild(box);
    setStatus(work.text + ": add it or discard it before leaving this item", true);
  }
  function closePrompt() {
    asking = null;
    var box = document.getElementById("pending-prompt");
    if (box) box.remove();
  }
  function promptAdd() {
    var a = asking;
    if (!a) return;
    closePrompt();
    if (a.work.add()) goTo(a.target);  /* an incomplete span stays, asking for what it lacks */
  }
  function promptDiscard() {
    var a = asking;
    if (!a) return;
    closePrompt(); a.work.discard(); goTo(a.target);
  }
  function toTop() {
    var card = document.getElementById("card");
    window.scrollTo(0, Math.max(0, card.getBoundingClientRect().top + window.scrollY - headHeight()));
    var focused = card.querySelector(".focus");
    if (focused) showFocus(focused);
  }
  function headHeight() { return document.querySelector("header").offsetHeight + 8; }
  /* Keep a focused question in view below the sticky header. */
  var ready = false;  /* no scrolling while the page starts: the guidelines stay in view */
  function showFocus(node) {
    if (!ready) return;
    var r = node.getBoundingClientRect(), top = headHeight();
    if (r.top < top) window.scrollBy(0, r.top - top);
    else if (r.bottom > window.innerHeight) window.scrollBy(0, Math.min(r.bottom - window.innerHeight + 8, r.top - top));
  }

  function renderProgress() {
    var done = DATA.items.filter(function (it) { return entry(it).done; }).length;
    document.getElementById("progress").textContent = done + " / " + DATA.items.length + " done" + (task().counter ? " · " + task().counter() : "");
    document.getElementById("bar").style.width = (100 * done / DATA.items.length) + "%";
    var strip = document.getElementById("strip");
    strip.textContent = "";
    DATA.items.forEach(function (it, i) {
      var e = entry(it);
      strip.appendChild(el("button", {
        cls: "dot" + (e.done ? " done" : e.touched ? " started" : "") + (i === state.current ? " here" : ""),
        title: it.id, text: String(i + 1), on: { click: function () { goTo(i); } }
      }));
    });
  }
  function render() {
    var it = item(), e = entry(it), card = document.getElementById("card");
    card.textContent = "";
    card.appendChild(el("div", { cls: "itemhead" }, [
      el("span", { cls: "pos", text: "item " + (state.current + 1) + " of " + DATA.items.length }),
      textBox("code", it.id, "itemid"),
      el("span", { id: "itemstate", cls: e.done ? "ok" : "", text: e.done ? "done" : "pending" })
    ]));
    task().render(it, e, card);
    renderProgress();
  }
  function refreshState() {
    var s = document.getElementById("itemstate"), e = entry();
    if (s) { s.textContent = e.done ? "done" : "pending"; s.className = e.done ? "ok" : ""; }
  }

  function onKey(ev) {
    var tag = (ev.target.tagName || "").toLowerCase();
    if (tag === "textarea" || tag === "input" || tag === "select") {
      if (task().editKey) task().editKey(ev);
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if ((tag === "button" || tag === "a" || tag === "summary") && (ev.key === "Enter" || ev.key === " ")) return;  /* it presses the button */
    if (asking) {
      if (ev.key === "a") promptAdd();
      else if (ev.key === "d") promptDiscard();
      else if (ev.key === "Escape") closePrompt();
      ev.preventDefault(); return;
    }
    if (task().firstKey && task().firstKey(ev, item(), entry()) !== false) { ev.preventDefault(); return; }
    if (ev.key === "j" || ev.key === "ArrowRight") { go(1); ev.preventDefault(); return; }
    if (ev.key === "k" || ev.key === "ArrowLeft") { go(-1); ev.preventDefault(); return; }
    if (task().key(ev, item(), entry()) !== false) ev.preventDefault();
  }

  function start() {
    document.getElementById("download").addEventListener("click", download);
    document.getElementById("load").addEventListener("change", function (ev) { if (ev.target.files[0]) loadFile(ev.target.files[0]); ev.target.value = ""; });
    document.getElementById("prev").addEventListener("click", function () { go(-1); });
    document.getElementById("next").addEventListener("click", function () { go(1); });
    document.getElementById("reset").addEventListener("click", function () {
      if (!window.confirm("Discard this browser's draft for this campaign and rater?")) return;
      try { localStorage.removeItem(KEY); } catch (err) { /* nothing stored */ }
      state = { current: 0, items: {}, imported: [] }; rev = 0; clearConflict(); render(); setStatus("draft discarded");
    });
    document.addEventListener("keydown", onKey);
    window.addEventListener("beforeunload", function (ev) {
      if (!atRisk()) return;
      ev.preventDefault(); ev.returnValue = "";  /* the browser asks before the page closes */
    });
    window.addEventListener("storage", function (ev) {  /* another tab saved: warn at once */
      if (ev.key !== KEY || !ev.newValue) return;
      var other = null;
      try { other = JSON.parse(ev.newValue); } catch (err) { return; }
      if (other && (other.rev || 0) > rev) warnConflict(other);
    });
    var restored = restore();
    var guide = document.querySelector("details.guidelines");
    if (restored && guide) guide.open = false;  /* a returning rater has read them */
    render();
    setStatus(restored ? "Loaded saved draft from this browser (" + KEY + ")" : "new draft; autosaves in this browser");
    ready = true;
  }

  return {
    DATA: DATA, KEY: KEY, tasks: tasks, el: el, textBox: textBox, entry: entry, item: item,
    changed: changed, render: render, refreshState: refreshState, go: go, start: start, showFocus: showFocus,
    setStatus: setStatus, atRisk: atRisk,
    cpLength: cpLength, u16ToCp: u16ToCp, cpToU16: cpToU16, exportObject: exportObject
  };
})();
