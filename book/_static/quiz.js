/* Quizzes of the course: show the explanation of the option the reader picks.
 * No dependencies, no network.  The HTML (book/_ext/quiz.py) already holds, for every option,
 * its verdict and explanation; this script only reveals the one that was picked. */
(function () {
  "use strict";

  function pick(quiz, button) {
    var letter = button.getAttribute("data-option");
    var correct = button.getAttribute("data-correct") === "true";
    quiz.querySelectorAll(".quiz-option").forEach(function (b) {
      var chosen = b === button;
      b.setAttribute("aria-pressed", chosen ? "true" : "false");
      b.classList.toggle("is-chosen", chosen);
      b.classList.toggle("is-right", chosen && correct);
      b.classList.toggle("is-wrong", chosen && !correct);
    });
    var feedback = quiz.querySelector(".quiz-feedback");
    feedback.classList.toggle("is-right", correct);
    feedback.classList.toggle("is-wrong", !correct);
    var shown = null;
    feedback.querySelectorAll(".quiz-explanation").forEach(function (e) {
      var on = e.getAttribute("data-option") === letter;
      e.classList.toggle("is-shown", on);
      if (on) { shown = e; }
    });
    quiz.setAttribute("data-answered", correct ? "right" : "wrong");
    // Math was typeset at load time; typeset again only if MathJax skipped hidden content.
    if (shown && window.MathJax && window.MathJax.typesetPromise) {
      var pending = shown.querySelectorAll("span.math, div.math");
      var needs = Array.prototype.some.call(pending, function (m) { return !m.querySelector("mjx-container"); });
      if (needs) { window.MathJax.typesetPromise([shown]).catch(function () {}); }
    }
  }

  function init() {
    document.querySelectorAll(".quiz").forEach(function (quiz) {
      quiz.classList.add("quiz-js");
      quiz.querySelectorAll(".quiz-option").forEach(function (button) {
        button.addEventListener("click", function () { pick(quiz, button); });
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
