/* The two sidebars on a narrow screen: what the themes' own handlers leave out.
 *
 * pydata-sphinx-theme opens a sidebar as a modal <dialog> when its button (☰ "全书目录", or "本页目录") is
 * pressed, and closes it on Escape or a tap on the backdrop; the book theme collapses the left sidebar
 * in place on a wide screen.  Registered by book/_ext/course_site.py (which also makes each button the
 * only one of its kind, so that the theme's handler is bound to it); tested by
 * tests/book/test_navigation_browser.py.  This script adds:
 *
 * - a visible "关闭" button at the top of an open sidebar (a phone has no Escape key, and the backdrop
 *   is a thin strip);
 * - a tap on a link in the page-contents sidebar closes it, so that the reader sees the section;
 * - focus goes back to the button that opened the sidebar when it closes (the book theme blurs the
 *   button on click, so the theme alone would leave focus on <body>);
 * - aria-expanded on both buttons tells a screen reader whether their sidebar is shown.
 */
(function () {
  "use strict";

  var WIDE = window.matchMedia("(min-width: 992px)");
  var KINDS = ["primary", "secondary"];

  function parts(kind) {
    return {
      button: document.querySelector("." + kind + "-toggle"),
      dialog: document.getElementById("pst-" + kind + "-sidebar-modal"),
      sidebar: document.getElementById("pst-" + kind + "-sidebar"),
    };
  }

  function shown(p) {
    if (p.dialog && p.dialog.open) { return true; }
    if (!WIDE.matches || !p.sidebar) { return false; }
    return !p.sidebar.classList.contains("pst-sidebar-hidden") && p.sidebar.offsetParent !== null;
  }

  function update() {
    KINDS.forEach(function (kind) {
      var p = parts(kind);
      if (p.button) { p.button.setAttribute("aria-expanded", shown(p) ? "true" : "false"); }
    });
  }

  function closeButton(dialog) {
    var close = document.createElement("button");
    close.type = "button";
    close.className = "course-sidebar-close";
    close.textContent = "关闭";
    close.setAttribute("aria-label", "关闭侧栏");
    close.addEventListener("click", function () { dialog.close(); });
    return close;
  }

  function watch(kind) {
    var p = parts(kind);
    if (!p.dialog) { return; }
    var byLink = false;
    p.dialog.addEventListener("click", function (event) {
      var link = event.target.closest ? event.target.closest("a[href]") : null;
      if (kind === "secondary" && link && p.dialog.open) {
        byLink = true;
        p.dialog.close();
      }
    });
    new MutationObserver(function () {
      var close = document.querySelector(".course-sidebar-close[data-for='" + kind + "']");
      if (p.dialog.open && !close) {
        close = closeButton(p.dialog);
        close.dataset.for = kind;
        p.dialog.insertBefore(close, p.dialog.firstChild);
      } else if (!p.dialog.open && close) {
        close.remove();  // the theme has moved the sidebar's content (with it) back to the page
      }
      update();
    }).observe(p.dialog, { attributes: true, attributeFilter: ["open"] });
    // Focus is then on <body> or still on a link of the sidebar, hidden again on a phone.  The theme
    // moves the content back and refocuses what had focus before (<body>) in its own "close" listeners;
    // look once every listener of that event has run (a timer started from the attribute change could
    // run before the close event's task under load, and the theme's move would then take focus away).
    p.dialog.addEventListener("close", function () {
      var restore = !byLink;
      byLink = false;
      setTimeout(function () {
        var focus = document.activeElement;
        var lost = !focus || focus === document.body || (p.sidebar && p.sidebar.contains(focus));
        if (restore && p.button && lost && !p.dialog.open) { p.button.focus(); }
      }, 0);
    });
    if (p.sidebar) {
      new MutationObserver(update).observe(p.sidebar, { attributes: true, attributeFilter: ["class"] });
    }
  }

  function init() {
    KINDS.forEach(watch);
    update();
    if (WIDE.addEventListener) { WIDE.addEventListener("change", update); }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
