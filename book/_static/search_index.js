/* The search page loads its index (searchindex.js, 50-60 kB compressed, the page's largest file) without
 * delaying the page's first paint.
 *
 * The index used to be a script tag in the head of search.html: nothing of the page was drawn before it
 * had arrived and run.  book/_ext/page_speed.py removes that tag and writes the index's address (with a
 * version of its content) into this script's data-index.  With a query (search.html?q=...) the results
 * need the index: it is loaded at once (Sphinx's searchtools.js keeps the query until Search.setIndex).
 * Without one, the page is drawn first and the index is loaded after the page's load event, so that the
 * query the reader types next finds it in the cache.  Registered for search.html only by
 * book/_ext/course_site.py; tested by tests/book/test_search_browser.py.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var url = script && script.getAttribute("data-index");
  if (!url || typeof Search === "undefined" || typeof Search.loadIndex !== "function") { return; }

  function load() {
    if (!Search.hasIndex()) { Search.loadIndex(url); }
  }

  if (new URLSearchParams(window.location.search).get("q")) {
    load();
  } else if (document.readyState === "complete") {
    setTimeout(load, 0);
  } else {
    window.addEventListener("load", function () { setTimeout(load, 0); }, { once: true });
  }
})();
