/* Accessible names for controls of the theme (pydata/book theme, myst-nb) that lack one or whose
 * name does not contain their visible text (WCAG 2.5.3, 4.1.2).  Registered by book/_ext/course_site.py;
 * the audit is tests/book/test_accessibility.py (axe-core).  No dependencies, no network. */
(function () {
  "use strict";

  function fix() {
    // Search buttons: their visible text ("搜索 Ctrl+K") is their name; the shorter aria-label hid it.
    document.querySelectorAll("button.search-button__button[aria-label]").forEach(function (b) {
      b.removeAttribute("aria-label");
    });
    // Colour-mode switch: icon-only; its name and tooltip say what it does, in Chinese.  The icons'
    // own titles (one of them English) would count as its text, so they go.
    document.querySelectorAll(".theme-switch-button").forEach(function (b) {
      b.setAttribute("aria-label", "切换颜色模式（亮色、暗色、跟随系统）");
      b.setAttribute("data-bs-title", "切换颜色模式");
      b.querySelectorAll("[data-mode]").forEach(function (icon) {
        icon.setAttribute("aria-hidden", "true");
        icon.removeAttribute("title");                 // <i>, before Font Awesome turns it into <svg>
        icon.removeAttribute("aria-labelledby");
        icon.querySelectorAll("title").forEach(function (t) { t.remove(); });   // <svg>, after it
      });
    });
    // Collapsible chapters of the navigation: the toggle names the chapter it opens.
    document.querySelectorAll("nav details > summary").forEach(function (s) {
      if (s.textContent.trim()) { return; }
      var link = s.parentElement.parentElement.querySelector(":scope > a");
      var title = link ? link.textContent.trim() : "";
      s.setAttribute("aria-label", title ? "展开或收起“" + title + "”的小节" : "展开或收起小节");
    });
    // The themes' English names of the two navigation landmarks.
    document.querySelectorAll("nav.bd-docs-nav[aria-label='Main']").forEach(function (n) {
      n.setAttribute("aria-label", "全书目录");
    });
    document.querySelectorAll("#jb-print-toc nav[aria-label='Page']").forEach(function (n) {
      n.setAttribute("aria-label", "本页目录");
    });
    // Hidden code cells (myst-nb): the visible "显示代码" is the name, not an English aria-label.
    document.querySelectorAll("details.hide summary[aria-label]").forEach(function (s) {
      if (s.textContent.trim()) { s.removeAttribute("aria-label"); }
    });
  }

  // A box wider than its column scrolls sideways: a display formula (course.css), a code block, a cell's
  // output, a table.  A keyboard reader reaches it with Tab and scrolls it with the arrow keys (WCAG
  // 2.1.1).  The theme measured every box of the page on "load" (pydata-sphinx-theme's
  // addTabStopsToScrollableElements, left out of its script by book/_ext/page_speed.py): a forced style
  // and layout of the whole page, the sections off screen included, which the browser otherwise skips
  // until the reader scrolls near them (course.css).  Here every box starts as a tab stop, and a box is
  // measured when it comes within a screen of the viewport (its section is drawn then anyway): one that
  // does not scroll at the present width stops being a tab stop; again after a resize.
  var SCROLLERS = "div.math > mjx-container[display='true'], pre, .nboutput > .output_area, .cell_output > .output, " +
    ".jp-RenderedHTMLCommon, .pst-scrollable-table-container";
  var watcher = null;

  function measure(entries) {
    var near = entries.filter(function (e) { return e.isIntersecting; }).map(function (e) { return e.target; });
    var scrolls = near.map(function (box) {          // read every box, then write: one layout
      return box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
    });
    near.forEach(function (box, i) {
      if (scrolls[i]) { box.setAttribute("tabindex", "0"); } else { box.removeAttribute("tabindex"); }
      watcher.unobserve(box);
    });
  }

  function scrollStops() {
    if (watcher) { watcher.disconnect(); }
    var boxes = document.querySelectorAll(SCROLLERS);
    if (!("IntersectionObserver" in window)) { return; }
    watcher = new IntersectionObserver(measure, { rootMargin: "100% 0px" });
    boxes.forEach(function (box) {
      box.setAttribute("tabindex", "0");
      watcher.observe(box);
    });
    document.documentElement.dataset.scrollStops = "set";
  }

  // In-page links: a section the browser skipped (course.css) has only an estimated height, so a scroll
  // to an anchor below it could stop short.  The first in-page link followed draws every section first.
  function drawAllSections() {
    document.documentElement.classList.add("course-all-sections");
  }

  function start() {
    fix();
    document.addEventListener("click", function (event) {
      var link = event.target.closest ? event.target.closest("a[href*='#']") : null;
      if (link && link.hash && link.pathname === window.location.pathname) { drawAllSections(); }
    }, true);
    window.addEventListener("hashchange", drawAllSections);
    // measured once the page's fonts and figures are in (a code block widens when its font arrives)
    if (document.readyState === "complete") { scrollStops(); } else { window.addEventListener("load", scrollStops); }
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(scrollStops, 150);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
