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
    if (shown) { bringIntoView(shown.querySelector(".quiz-verdict") || shown); }
    // Screen readers hear the verdict from the quiz's live region (role=status).
    var status = quiz.querySelector(".quiz-status");
    if (status && shown) {
      var verdict = shown.querySelector(".quiz-verdict");
      status.textContent = verdict ? verdict.textContent.replace(/^[✔✘]\s*/, "") : (correct ? "回答正确" : "回答错误");
    }
  }

  // The verdict below the options is often off screen on a phone after a tap on one of the last options: it
  // moves up to about a third of the screen (only when it is not already well in view).
  function bringIntoView(element) {
    var box = element.getBoundingClientRect(), height = window.innerHeight;
    if (box.top >= height * 0.12 && box.bottom <= height * 0.8) { return; }
    window.scrollBy({ top: box.top - height * 0.35, left: 0, behavior: "instant" });
  }

  // "Show every option's explanation" (for revision); a second click hides them again and leaves
  // only the picked option's explanation, if any.
  function addRevealButton(quiz) {
    var options = quiz.querySelector(".quiz-options");
    if (!options) { return; }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "quiz-reveal";
    button.setAttribute("aria-expanded", "false");
    button.textContent = "显示全部选项的解析";
    button.addEventListener("click", function () {
      var all = !quiz.classList.contains("quiz-all");
      quiz.classList.toggle("quiz-all", all);
      button.setAttribute("aria-expanded", all ? "true" : "false");
      button.textContent = all ? "收起全部解析" : "显示全部选项的解析";
    });
    options.insertAdjacentElement("afterend", button);
  }

  function init() {
    document.querySelectorAll(".quiz").forEach(function (quiz) {
      quiz.classList.add("quiz-js");
      quiz.querySelectorAll(".quiz-option").forEach(function (button) {
        button.addEventListener("click", function () { pick(quiz, button); });
      });
      addRevealButton(quiz);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
