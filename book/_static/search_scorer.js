/* The search page's ranking (html_search_scorer in _config.yml; Sphinx puts it into language_data.js, read before
 * searchtools.js, which then uses it instead of its own).  Sphinx's weights, and one rule of the course: a page or
 * section whose title is exactly what the reader asked for comes first ("召回率" finds the section that defines
 * recall before a page that only names recall in one of its headings; Sphinx gave both the same score and
 * ordered them by name).  Tested by tests/book/test_search_browser.py. */
var Scorer = {
  score: function (result) {
    var title = String(result[1] || "").split(" > ").pop().trim().toLowerCase();
    var query = (new URLSearchParams(window.location.search).get("q") || "").trim().toLowerCase();
    return result[4] + (query && title === query ? Scorer.exactTitle : 0);
  },
  exactTitle: 100,
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
