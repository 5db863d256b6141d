/* judgekit review page: shared core (state, autosave, navigation, export / load, keyboard).
 * Every string from a model or an input file is put into the page with textContent, never as
 * HTML. Spans are stored as Unicode code-point offsets (browsers count UTF-16 units). */
var JK = (function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("judgekit-data").textContent);
  var KEY = "judgekit:review:" + DATA.campaign + ":" + DATA.rater;
  var tasks = {};
  var state = { current: 0, items: {} };
  var shownAt = Date.now();

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
  function save() {
    try {
      localStorage.setItem(KEY, JSON.stringify({ current: state.current, items: state.items }));
      setStatus("saved in this browser at " + new Date().toLocaleTimeString());
    } catch (err) {
      setStatus("autosave failed (" + err.name + "): use Download JSON now", true);
    }
  }
  function setStatus(text, bad) {
    var s = document.getElementById("status");
    s.textContent = text;
    s.className = bad ? "bad" : "";
  }
  function restore() {
    var raw = null;
    try { raw = localStorage.getItem(KEY); } catch (err) { raw = null; }
    if (!raw) return false;
    try {
      var saved = JSON.parse(raw);
      merge(saved.items || {});
      state.current = Math.min(saved.current || 0, DATA.items.length - 1);
      return true;
    } catch (err) { return false; }
  }
  function merge(items) {
    DATA.items.forEach(function (it) {
      var got = items[it.id];
      if (got && got.answer) state.items[it.id] = { answer: got.answer, done: !!got.done, seconds: got.seconds || 0, touched: true };
    });
  }
  function loadFile(file) {
    var reader = new FileReader();
    reader.onload = function () {
      var data;
      try { data = JSON.parse(reader.result); } catch (err) { setStatus(file.name + ": not JSON", true); return; }
      if (data.campaign !== DATA.campaign || data.task !== DATA.task) {
        setStatus(file.name + ": campaign " + data.campaign + ", not this page's " + DATA.campaign, true);
        return;
      }
      var byId = {}, hashes = {};
      DATA.items.forEach(function (it) { hashes[it.id] = it.hash; });
      (data.items || []).forEach(function (r) { if (hashes[r.id] === r.hash) byId[r.id] = r; });
      merge(byId);
      save(); render();
      setStatus("loaded " + Object.keys(byId).length + " items from " + file.name);
    };
    reader.readAsText(file);
  }
  function download() {
    var blob = new Blob([JSON.stringify(exportObject(), null, 1)], { type: "application/json" });
    var a = el("a", { href: URL.createObjectURL(blob), download: "judgekit-" + DATA.task + "-" + DATA.campaign + "-" + DATA.rater + ".json" });
    document.body.appendChild(a); a.click(); a.remove();
    setStatus("downloaded " + a.getAttribute("download"));
  }

  function changed(done) {
    tick();  /* the time so far counts for this item before it may become done */
    var e = entry();
    e.touched = true;
    if (done !== undefined) e.done = done;
    save(); renderProgress();
  }
  function go(delta) {
    tick();
    state.current = Math.max(0, Math.min(DATA.items.length - 1, state.current + delta));
    save(); render();
  }
  function goTo(i) { tick(); state.current = i; save(); render(); }

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
      state = { current: 0, items: {} }; render(); setStatus("draft discarded");
    });
    document.addEventListener("keydown", onKey);
    var restored = restore();
    var guide = document.querySelector("details.guidelines");
    if (restored && guide) guide.open = false;  /* a returning rater has read them */
    render();
    setStatus(restored ? "Loaded saved draft from this browser (" + KEY + ")" : "new draft; autosaves in this browser");
  }

  return {
    DATA: DATA, KEY: KEY, tasks: tasks, el: el, textBox: textBox, entry: entry, item: item,
    changed: changed, render: render, refreshState: refreshState, go: go, start: start,
    cpLength: cpLength, u16ToCp: u16ToCp, cpToU16: cpToU16, exportObject: exportObject
  };
})();
