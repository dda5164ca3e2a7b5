/* 「再来一题」: the variants of a question template, one at a time, each with its own feedback.
 * The page (book/_ext/quiz_variants.py) holds every variant as JSON in its box, with the links to the book's
 * sections already resolved; this script only shows them.  No dependencies, no network, text only (every string
 * goes in with textContent).  It grades as autograder/quiz/template.py does: an option is right or names its
 * mistake; a typed number is right within the stated tolerance, names a mistake when it is within the tolerance
 * of that mistake's number, and is read by the same rule (a decimal or a fraction, full-width digits allowed); the
 * words of its messages come with the data. */
(function () {
  "use strict";

  var NUMBER = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:\/(\d+(?:\.\d*)?|\.\d+))?$/;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  /* A typed number, or null: the rule of autograder.quiz.parse_number. */
  function parseNumber(text) {
    var cleaned = String(text).normalize("NFKC").replace(/\s+/g, "");
    var m = NUMBER.exec(cleaned);
    if (!m) { return null; }
    var value = parseFloat(m[2]);
    if (m[3] !== undefined) {
      var den = parseFloat(m[3]);
      if (den === 0) { return null; }
      value /= den;
    }
    return m[1] === "-" ? -value : value;
  }

  function Box(root) {
    this.root = root;
    this.data = JSON.parse(root.querySelector("script.variants-data").textContent);
    this.id = root.getAttribute("data-template");
    this.links = {};
    var self = this;
    root.querySelectorAll(".variants-map .variants-link, .variants-intro .variants-link").forEach(function (span) {
      var a = span.querySelector("a");
      if (a) { self.links[span.getAttribute("data-mistake")] = { href: a.getAttribute("href"), text: a.textContent }; }
    });
    this.index = 0;
    this.build();
    this.show(0, false);
  }

  Box.prototype.build = function () {
    var root = this.root, self = this;
    root.classList.add("variants-js");
    var live = el("div", "variants-live");
    this.count = el("p", "variants-count");
    this.count.tabIndex = -1;
    this.count.id = "variants-" + this.id + "-count";
    this.stem = el("div", "variants-stem");
    this.answer = el("div", "variants-answer");
    this.status = el("p", "quiz-status variants-status");  // read by screen readers, not shown (quiz.css)
    this.status.setAttribute("role", "status");
    this.status.setAttribute("aria-live", "polite");
    this.feedback = el("div", "variants-feedback");
    var actions = el("div", "variants-actions");
    this.solutionButton = el("button", "variants-solution", "显示解答");
    this.solutionButton.type = "button";
    this.solutionButton.setAttribute("aria-expanded", "false");
    this.solutionButton.addEventListener("click", function () { self.toggleSolution(); });
    this.nextButton = el("button", "variants-next", "再来一题");
    this.nextButton.type = "button";
    this.nextButton.addEventListener("click", function () { self.show(self.index + 1, true); });
    actions.appendChild(this.nextButton);
    actions.appendChild(this.solutionButton);
    this.solution = el("div", "variants-solution-text");
    this.solution.id = "variants-" + this.id + "-solution";
    this.solution.hidden = true;
    this.solutionButton.setAttribute("aria-controls", this.solution.id);
    [this.count, this.stem, this.answer, this.status, this.feedback, this.solution, actions].forEach(function (n) {
      live.appendChild(n);
    });
    root.insertBefore(live, root.querySelector(".variants-static"));
  };

  Box.prototype.show = function (index, focus) {
    var n = this.data.variants.length;
    this.index = (index % n + n) % n;
    var v = this.data.variants[this.index];
    this.variant = v;
    this.count.textContent = "第 " + (this.index + 1) + " 题（共 " + n + " 题）";
    this.stem.textContent = "";
    var stem = this.stem;
    v.stem.forEach(function (p) { stem.appendChild(el("p", "", p)); });
    this.answer.textContent = "";
    this.feedback.textContent = "";
    this.feedback.className = "variants-feedback";
    this.status.textContent = "";
    this.solution.hidden = true;
    this.solution.textContent = "";
    this.solutionButton.setAttribute("aria-expanded", "false");
    this.solutionButton.textContent = "显示解答";
    if (this.data.form === "choice") { this.buildOptions(v); } else { this.buildInput(v); }
    if (focus) { this.count.focus(); }
  };

  Box.prototype.buildOptions = function (v) {
    var self = this;
    var group = el("div", "variants-options");
    group.setAttribute("role", "group");
    group.setAttribute("aria-labelledby", this.count.id);
    v.options.forEach(function (o) {
      var b = el("button", "quiz-option variants-option");  // the quizzes' button (quiz.css)
      b.type = "button";
      b.setAttribute("aria-pressed", "false");
      b.setAttribute("data-option", o.letter);
      b.appendChild(el("span", "quiz-letter", o.letter + "."));
      b.appendChild(el("span", "quiz-option-text variants-option-text", o.text));
      b.addEventListener("click", function () { self.pick(o, b); });
      group.appendChild(b);
    });
    this.answer.appendChild(group);
  };

  Box.prototype.buildInput = function (v) {
    var self = this;
    var form = el("form", "variants-form");
    form.noValidate = true;
    var inputId = "variants-" + this.id + "-input";
    var label = el("label", "variants-label", "你的答案");
    label.htmlFor = inputId;
    var input = el("input", "variants-input");
    input.id = inputId;
    input.type = "text";
    input.inputMode = "decimal";
    input.autocomplete = "off";
    input.spellcheck = false;
    var hint = el("p", "variants-instruction", v.key.instruction);
    hint.id = inputId + "-hint";
    input.setAttribute("aria-describedby", hint.id);
    var submit = el("button", "variants-submit", "提交");
    submit.type = "submit";
    form.appendChild(label);
    form.appendChild(input);
    form.appendChild(submit);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      self.typed(input.value);
    });
    this.answer.appendChild(hint);
    this.answer.appendChild(form);
    this.input = input;
  };

  /* The verdict line, the mistake with its section, and the explanation. */
  Box.prototype.verdict = function (right, chosen, mistakeId, explanation) {
    var fb = this.feedback;
    fb.textContent = "";
    fb.className = "variants-feedback " + (right ? "is-right" : "is-wrong");
    var head = el("p", "variants-verdict");
    head.appendChild(el("strong", "", right ? "✔ 回答正确" : "✘ 回答错误"));
    head.appendChild(document.createTextNode("（" + chosen + "）"));
    fb.appendChild(head);
    if (mistakeId) {
      var line = el("p", "variants-mistake");
      line.appendChild(document.createTextNode("常见错误：" + this.data.mistakes[mistakeId]));
      var link = this.links[mistakeId];
      if (link) {
        line.appendChild(document.createTextNode("　见小节 "));
        var a = el("a", "", link.text);
        a.href = link.href;
        line.appendChild(a);
      }
      fb.appendChild(line);
    }
    fb.appendChild(el("p", "variants-explanation", explanation));
    this.status.textContent = (right ? "回答正确" : "回答错误") + (mistakeId ? "，常见错误：" + this.data.mistakes[mistakeId] : "");
  };

  Box.prototype.pick = function (option, button) {
    this.answer.querySelectorAll(".variants-option").forEach(function (b) {
      var chosen = b === button;
      b.setAttribute("aria-pressed", chosen ? "true" : "false");
      b.classList.toggle("is-right", chosen && option.correct);
      b.classList.toggle("is-wrong", chosen && !option.correct);
    });
    this.verdict(option.correct, "你选择了 " + option.letter, option.mistake, option.explanation);
  };

  Box.prototype.typed = function (text) {
    var v = this.variant, x = parseNumber(text);
    if (x === null) {
      this.feedback.textContent = "";
      this.feedback.className = "variants-feedback is-invalid";
      var shown = String(text).trim().slice(0, 40);
      var message = shown ? this.data.messages.not_a_number.replace("{}", shown) : this.data.messages.empty;
      this.feedback.appendChild(el("p", "variants-verdict", message));
      this.status.textContent = message;
      this.input.setAttribute("aria-invalid", "true");
      return;
    }
    this.input.removeAttribute("aria-invalid");
    var key = v.key, eps = 1e-12;
    var you = "你的答案 " + String(text).trim();
    if (Math.abs(x - key.value) <= key.tolerance + eps) {
      this.verdict(true, you, null, v.solution);
      return;
    }
    var near = v.diagnoses.filter(function (d) { return Math.abs(x - d.value) <= key.tolerance + eps; });
    if (near.length) {
      this.verdict(false, you, near[0].mistake, near[0].explanation);
    } else {
      this.verdict(false, you, null, this.data.messages.unknown);
    }
  };

  Box.prototype.toggleSolution = function () {
    var open = this.solution.hidden;
    this.solution.hidden = !open;
    this.solution.textContent = "";
    if (open) {
      this.solution.appendChild(el("p", "variants-answer-line", "正确答案：" + this.variant.answer));
      this.solution.appendChild(el("p", "", this.variant.solution));
    }
    this.solutionButton.setAttribute("aria-expanded", open ? "true" : "false");
    this.solutionButton.textContent = open ? "收起解答" : "显示解答";
  };

  window.courseVariants = { parseNumber: parseNumber };

  function init() {
    document.querySelectorAll(".quiz-variants").forEach(function (root) {
      if (!root.classList.contains("variants-js")) { new Box(root); }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
