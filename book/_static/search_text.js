/* Search results (search.html) show formulas as text, not as raw TeX.
 *
 * Sphinx's search builds each result's snippet from the text of the page's HTML, where a formula is
 * still its TeX source ("\[ \operatorname{Recall}=\frac{\mathrm{TP}}…"): unreadable, and one long
 * token that made the page wider than a phone.  Before the snippet is cut, every formula becomes
 * plain text ("Recall=TP/(TP+FN)"); equation numbers and the print-only contents list go.  Registered for search.html only by
 * book/_ext/course_site.py; tested by tests/book/test_phone_layout.py.
 */
(function () {
  "use strict";

  var SYMBOLS = {
    times: "×", cdot: "·", le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠", approx: "≈",
    pm: "±", infty: "∞", sum: "Σ", prod: "Π", int: "∫", to: "→", rightarrow: "→", leftarrow: "←",
    mid: "|", in: "∈", ldots: "…", dots: "…", cdots: "…", lvert: "|", rvert: "|", vert: "|",
    alpha: "α", beta: "β", gamma: "γ", delta: "δ", Delta: "Δ", epsilon: "ε", varepsilon: "ε",
    theta: "θ", lambda: "λ", mu: "μ", pi: "π", rho: "ρ", sigma: "σ", Sigma: "Σ", tau: "τ",
    phi: "φ", Phi: "Φ", omega: "ω", prime: "′", mathbb: "", quad: " ", qquad: " ",
  };

  /** Readable text of a TeX formula: commands become symbols or vanish, fractions become a/b. */
  function texToText(tex) {
    var s = tex.replace(/^\s*(\\\[|\\\(|\$\$?)/, "").replace(/(\\\]|\\\)|\$\$?)\s*$/, "");
    s = s.replace(/\\\{/g, "\u0001").replace(/\\\}/g, "\u0002");  // literal braces, restored below
    s = s.replace(/\\begin\{[^}]*\}|\\end\{[^}]*\}|\\label\{[^}]*\}|\\tag\{[^}]*\}/g, " ");
    var previous;
    do {  // font commands around plain text, innermost first: \mathrm{TP} -> TP
      previous = s;
      s = s.replace(/([_^])\{([^{}]*)\}/g, function (m, op, x) { return op + (x.length > 1 ? "(" + x + ")" : x); });
    s = s.replace(/\\(?:operatorname|mathrm|mathbf|mathit|mathsf|text|textrm|boldsymbol)\s*\{([^{}]*)\}/g, "$1");
    } while (s !== previous);
    s = s.replace(/\\[dt]?frac\s*(\w)\s*(\w)/g, "$1/$2");  // \frac56
    do {  // innermost fractions first
      previous = s;
      s = s.replace(/\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, function (m, a, b) {
        var wrap = function (x) { return /^[\w.′]+$/.test(x.trim()) ? x.trim() : "(" + x.trim() + ")"; };
        return wrap(a) + "/" + wrap(b);
      });
    } while (s !== previous);
    s = s.replace(/([_^])\{([^{}]*)\}/g, function (m, op, x) { return op + (x.length > 1 ? "(" + x + ")" : x); });
    s = s.replace(/\\(?:operatorname|mathrm|mathbf|mathit|mathsf|text|textrm|boldsymbol|color\{[^}]*\})\s*/g, "");
    s = s.replace(/\\([A-Za-z]+)/g, function (m, name) {
      return Object.prototype.hasOwnProperty.call(SYMBOLS, name) ? SYMBOLS[name] : "";
    });
    s = s.replace(/\\[,;:!> ]/g, " ").replace(/\\\\/g, "; ").replace(/&/g, "");
    s = s.replace(/[{}]/g, "").replace(/\u0001/g, "{").replace(/\u0002/g, "}").replace(/\s+/g, " ").trim();
    return s;
  }

  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") { return; }
  var original = Search.htmlToText;
  Search.htmlToText = function (htmlString, anchor) {
    var doc = new DOMParser().parseFromString(htmlString, "text/html");
    doc.querySelectorAll(".eqno, #jb-print-docs-body").forEach(function (el) { el.remove(); });
    doc.querySelectorAll("div.math, span.math").forEach(function (el) {
      // a typeset formula keeps its TeX in data-tex (book/_ext/static_math.py)
      el.replaceWith(doc.createTextNode(" " + texToText(el.getAttribute("data-tex") || el.textContent) + " "));
    });
    return original.call(this, doc.documentElement.outerHTML, anchor);
  };
  window.courseTexToText = texToText;  // for the tests
})();
