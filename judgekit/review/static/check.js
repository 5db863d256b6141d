/* judgekit review page: is an answer read from a file a valid done answer? The rules are the
 * task's JSON Schema written into the page by judgekit (judgekit/review/schema.py, the same
 * schema `judgekit review import` applies), checked by the vendored @cfworker/json-schema, and
 * the one MQM span rule JSON Schema cannot state (schema.span_problem): start < end and the
 * marked text equals the text there (code points, NFC). */
var JKCheck = (function () {
  "use strict";
  var cache = {};

  function schemaOf(data, it, kind) {  /* schema.item_schema, mirrored */
    return { "$schema": data.answer_schema["$schema"], "$defs": data.answer_schema["$defs"],
      allOf: [{ "$ref": "#/$defs/" + kind }, it.schema || {}] };
  }
  /* The subschema a keyword location points at, following local $refs. */
  function nodeAt(schema, location) {
    var parts = location.replace(/^#\/?/, "").split("/").slice(0, -1), node = schema;
    for (var i = 0; i < parts.length && node; i++) {
      var key = parts[i].replace(/~1/g, "/").replace(/~0/g, "~");
      if (key === "$ref") node = nodeAt(schema, node["$ref"] + "/x");
      else node = node[key];
    }
    return node;
  }
  function where(location) { return location === "#" ? "the answer" : location.slice(1); }
  function spanProblem(text, err) {
    if (err.start >= err.end) return "start " + err.start + " is not before end " + err.end;
    var found = Array.from(text).slice(err.start, err.end).join("");
    if (found.normalize("NFC") !== String(err.text).normalize("NFC")) {
      return "offsets [" + err.start + ", " + err.end + ") mark \u201c" + found + "\u201d, not \u201c" + err.text + "\u201d";
    }
    return null;
  }
  /* Why `answer` is not a valid done answer of item `it` (draft: a valid unfinished one), or
   * null (schema.answer_problem). */
  function problem(data, it, answer, draft) {
    var kind = draft ? "draft" : "answer", schema = schemaOf(data, it, kind);
    var key = kind + JSON.stringify(it.schema || {});
    if (!cache[key]) cache[key] = new JsonSchema.Validator(schema, "2020-12", false);
    var got = cache[key].validate(answer === undefined ? null : answer);
    if (!got.valid) {
      var worst = got.errors[0];
      got.errors.forEach(function (e) {
        if (e.instanceLocation.split("/").length >= worst.instanceLocation.split("/").length) worst = e;
      });
      var node = nodeAt(schema, worst.keywordLocation);
      var why = node && typeof node.description === "string" ? " (" + node.description + ")" : "";
      return where(worst.instanceLocation) + ": " + worst.error + why;
    }
    if (data.task === "mqm" && !draft) {
      for (var n = 0; n < answer.errors.length; n++) {
        var p = spanProblem(it.data[answer.errors[n].side], answer.errors[n]);
        if (p) return "/errors/" + n + ": " + p;
      }
    }
    return null;
  }
  return { problem: problem };
})();
