/* judgekit pages (the report and the review pages): text that holds Unicode bidirectional
   controls (embeddings, overrides and isolates, U+202A-U+202E and U+2066-U+2069) is shown as
   stored, but its element is marked: a visible sign before it, an outline and a title naming
   the controls, and the element is a bidi isolate, so an override cannot reorder the text
   around it (the "Trojan Source" display attack, CVE-2021-42574; Unicode UAX #9, section 2).
   One observer covers every way a page writes text (el(), textContent, text nodes). */
(function () {
  "use strict";
  var CONTROL = /[\u202A-\u202E\u2066-\u2069]/, CONTROLS = new RegExp(CONTROL.source, "g");
  var NAMES = { "202a": "LRE", "202b": "RLE", "202c": "PDF", "202d": "LRO", "202e": "RLO",
    "2066": "LRI", "2067": "RLI", "2068": "FSI", "2069": "PDI" };

  function ownText(element) {
    return Array.from(element.childNodes).map(function (n) { return n.nodeType === 3 ? n.data : ""; }).join("");
  }

  function check(element) {
    /* mark or unmark ``element`` by the text nodes directly in it */
    var text = ownText(element), note = "";
    if (CONTROL.test(text)) {
      var found = text.match(CONTROLS).map(function (c) {
        var code = c.charCodeAt(0).toString(16);
        return NAMES[code] + " (U+" + code.toUpperCase() + ")";
      });
      note = "This text holds bidirectional control characters: " + Array.from(new Set(found)).join(", ") +
        ". It may display in another order than it is stored.";
    }
    if (note === (element.dataset.bidi || "")) return;
    var title = (element.getAttribute("title") || "").replace(element.dataset.bidi || "\u0000", "").trim();
    if (note) element.dataset.bidi = note; else delete element.dataset.bidi;
    element.classList.toggle("bidi", !!note);
    title = [title, note].filter(Boolean).join("\n");
    if (title) element.setAttribute("title", title); else element.removeAttribute("title");
  }

  function visit(node) {
    if (node.nodeType === 3) { if (node.parentElement) check(node.parentElement); }
    else if (node.nodeType === 1) { check(node); node.childNodes.forEach(visit); }
  }

  var style = document.createElement("style");
  style.textContent = ".bidi { outline: 1px dashed #b35c00; unicode-bidi: isolate; }\n" +
    ".bidi::before { content: \"\\21C4  \"; color: #b35c00; font-weight: bold; }";
  document.head.appendChild(style);

  new MutationObserver(function (changes) {
    changes.forEach(function (c) {
      if (c.type === "characterData") visit(c.target);
      else { if (c.removedNodes.length) check(c.target); c.addedNodes.forEach(visit); }
    });
  }).observe(document.documentElement, { childList: true, subtree: true, characterData: true });
})();
