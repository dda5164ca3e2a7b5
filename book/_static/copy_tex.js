/* Copying text with formulas gives their TeX ($...$, $$...$$).
 *
 * The formulas are typeset at build time (book/_ext/static_math.py): their glyphs are CSS, so a plain copy
 * would drop them.  Each formula keeps its TeX in data-tex; when a selection holds a formula, the copied
 * text has the TeX in its place.  Added by static_math.py to the pages that have formulas.
 */
(function () {
  "use strict";

  function asTex(math) {
    var tex = math.getAttribute("data-tex");
    return math.getAttribute("data-display") === "1" ? "$$" + tex + "$$" : "$" + tex + "$";
  }

  document.addEventListener("copy", function (event) {
    var selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed || !event.clipboardData) { return; }
    var range = selection.getRangeAt(0);
    var start = range.commonAncestorContainer;
    var inside = (start.nodeType === 1 ? start : start.parentElement).closest("[data-tex]");
    var text;
    if (inside) {
      text = asTex(inside);
    } else {
      var fragment = range.cloneContents();
      var formulas = fragment.querySelectorAll("[data-tex]");
      if (formulas.length === 0) { return; }
      formulas.forEach(function (math) {
        math.querySelectorAll(".eqno").forEach(function (number) { math.parentNode.insertBefore(number, math); });
        math.replaceWith(document.createTextNode(asTex(math)));
      });
      fragment.querySelectorAll(".headerlink").forEach(function (link) { link.remove(); });
      text = fragment.textContent;
    }
    event.clipboardData.setData("text/plain", text);
    event.preventDefault();
  });
})();
