// Typeset a batch of TeX formulas to static HTML with MathJax 3 (CommonHTML output) in Node.
//
// Used by book/_ext/static_math.py, once per build: one process renders every formula of the site.
// stdin:  {"macros": {name: definition | [definition, nargs]}, "fontURL": "...",
//          "formulas": [{"tex": "...", "display": true|false}, ...]}
// stdout: {"css": "<the stylesheet of every character used>",
//          "results": [{"html": "<mjx-container ...>"} | {"error": "message"}, ...]}   (same order)
// A formula with a TeX error (an undefined macro included) gets {"error": ...}; the caller fails the build.
"use strict";

const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { CHTML } = require("mathjax-full/js/output/chtml.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

// Loading at run time is for browsers; an undefined macro must be an error, not a red box.
const NOT_HERE = new Set(["autoload", "require", "noundefined", "noerrors"]);

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on("data", (c) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

async function main() {
  const request = JSON.parse(await readStdin());
  const adaptor = liteAdaptor();
  AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
  const tex = new TeX({
    packages: AllPackages.filter((name) => !NOT_HERE.has(name)),
    macros: request.macros || {},
    formatError: (jax, err) => { throw err; },
  });
  // Formulas at the size of the text around them (not scaled to the x-height of a Chinese font).
  const chtml = new CHTML({ fontURL: request.fontURL, matchFontHeight: false, adaptiveCSS: true });
  const doc = mathjax.document("", { InputJax: tex, OutputJax: chtml });
  const results = [];
  for (const formula of request.formulas) {
    try {
      const node = doc.convert(formula.tex, { display: !!formula.display, em: 16, ex: 8, containerWidth: 1280 });
      results.push({ html: adaptor.outerHTML(node) });
    } catch (err) {
      results.push({ error: String((err && err.message) || err) });
    }
    // a TeX error may leave the parser's state behind: start the next formula clean
    tex.parseOptions.clear && tex.parseOptions.clear();
  }
  const css = adaptor.textContent(chtml.styleSheet(doc));
  process.stdout.write(JSON.stringify({ css, results }));
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + "\n");
  process.exit(1);
});
