// Typeset a batch of TeX formulas to static SVG with MathJax 3 in Node.
//
// Used by book/_ext/static_math.py, once per build: one process renders every formula of the site.
// stdin:  {"macros": {name: definition | [definition, nargs]},
//          "formulas": [{"tex": "...", "display": true|false}, ...]}
// stdout: {"css": "<the stylesheet of the formulas>",
//          "glyphs": {"MJX-TEX-I-1D44E": "<path data>", ...},      (every glyph the formulas draw)
//          "results": [{"html": "<mjx-container ...>"} | {"error": "message"}, ...]}   (same order)
// A formula with a TeX error (an undefined macro included) gets {"error": ...}; the caller fails the build.
//
// Output: SVG with the "global" font cache: a formula draws each character as <use href="#MJX-TEX-...">
// of a glyph path defined once per page (static_math.py writes the paths a page uses), and no element
// per character that CSS must style and lay out (CommonHTML's <mjx-c>: thousands per page, the main
// thread's work on a phone).  Colour: currentColor (dark mode follows the text).  Sizes are in em of
// the surrounding text (MathJax's ex is 0.442 em of its font), not in ex of a Chinese font.  Each
// formula keeps its MathML (assistive MathML, read by a screen reader).
"use strict";

const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { SVG } = require("mathjax-full/js/output/svg.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

// Loading at run time is for browsers; an undefined macro must be an error, not a red box.
const NOT_HERE = new Set(["autoload", "require", "noundefined", "noerrors"]);
// MathJax's TeX fonts: the x-height in em (the ex unit of the SVG output).
const EX_PER_EM = 0.442;
// Attributes only MathJax's own scripts read (there are none on the page), or only Internet Explorer.
const DROPPED = ["data-c", "data-mjx-texclass", "focusable", "xmlns", "xmlns:xlink"];
// The node names that MathJax's stylesheet styles (table lines, errors): the others are dropped.
const STYLED = new Set(["mtable", "merror", "maction"]);

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on("data", (c) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

const inEm = (value) => value.replace(/(-?\d*\.?\d+)ex\b/g, (_, n) => `${+(parseFloat(n) * EX_PER_EM).toFixed(3)}em`);

// The SVG of a formula made lean: em sizes, SVG 2 href, no attributes for MathJax's scripts, no group
// that only nests (fewer elements for the browser to style).
function lean(adaptor, node) {
  if (adaptor.kind(node) === "#text" || adaptor.kind(node) === "#comment") return;
  const kind = adaptor.kind(node);
  if (kind === "mjx-assistive-mml") return;  // MathML as MathJax wrote it
  for (const name of DROPPED) adaptor.removeAttribute(node, name);
  if (!STYLED.has(adaptor.getAttribute(node, "data-mml-node"))) adaptor.removeAttribute(node, "data-mml-node");
  if (kind === "svg") {
    for (const name of ["width", "height", "style"]) {
      const value = adaptor.getAttribute(node, name);
      if (value) adaptor.setAttribute(node, name, inEm(value));
    }
  }
  if (kind === "use") {
    adaptor.setAttribute(node, "href", adaptor.getAttribute(node, "xlink:href"));
    adaptor.removeAttribute(node, "xlink:href");
  }
  for (const child of adaptor.childNodes(node)) lean(adaptor, child);
  for (const child of [...adaptor.childNodes(node)]) {
    if (adaptor.kind(child) !== "g") continue;
    const attributes = adaptor.allAttributes(child).map((a) => a.name);
    const inner = [...adaptor.childNodes(child)];
    if (inner.length === 0) {
      adaptor.remove(child);  // an empty group (a space) draws nothing
    } else if (attributes.length === 0) {
      // a group without attributes only nests: its children take its place
      for (const grandchild of inner) adaptor.insert(grandchild, child);
      adaptor.remove(child);
    } else if (attributes.length === 1 && attributes[0] === "transform" && inner.length === 1
               && adaptor.kind(inner[0]) !== "#text") {
      // a group that only moves its one child: the child moves itself (outer transform first)
      const own = adaptor.getAttribute(inner[0], "transform");
      const outer = adaptor.getAttribute(child, "transform");
      adaptor.setAttribute(inner[0], "transform", own ? `${outer} ${own}` : outer);
      adaptor.insert(inner[0], child);
      adaptor.remove(child);
    }
  }
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
  const svg = new SVG({ fontCache: "global" });
  const doc = mathjax.document("", { InputJax: tex, OutputJax: svg });
  const results = [];
  for (const formula of request.formulas) {
    try {
      const node = doc.convert(formula.tex, { display: !!formula.display, em: 16, ex: 8, containerWidth: 1280 });
      lean(adaptor, node);
      results.push({ html: adaptor.outerHTML(node) });
    } catch (err) {
      results.push({ error: String((err && err.message) || err) });
    }
    // a TeX error may leave the parser's state behind: start the next formula clean
    tex.parseOptions.clear && tex.parseOptions.clear();
  }
  const glyphs = {};
  const defs = svg.fontCache.getCache();
  for (const path of adaptor.childNodes(defs)) {
    glyphs[adaptor.getAttribute(path, "id")] = adaptor.getAttribute(path, "d");
  }
  // the glyphs' hairline outline (MathJax marks the glyphs with data-c, dropped here)
  const css = adaptor.textContent(svg.styleSheet(doc)).replace(/\b(path|use)\[data-c\]/g, "$1");
  process.stdout.write(JSON.stringify({ css, glyphs, results }));
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + "\n");
  process.exit(1);
});
