/* Turns the single-page build of the course into a printable book (called by coursebook/pdf.py).
 * window.coursePrint(options) -> statistics; window.coursePrintPageNumbers({"toc-3": 12, ...}).
 * options: title, edition, date, siteUrl, demoUrl, submitUrl, pdfUrl, licence, toc: [{caption, entries: [{doc, level}]}]
 */
(function () {
  "use strict";

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "html") node.innerHTML = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }

  function headingText(h) {
    var copy = h.cloneNode(true);
    copy.querySelectorAll(".headerlink").forEach(function (a) { a.remove(); });
    return copy.textContent.trim();
  }

  function findDocuments(article, rootDoc) {
    var docs = [];
    var first = article.querySelector("h1");
    if (first) docs.push({ doc: rootDoc, heading: first });
    article.querySelectorAll('span[id^="document-"]').forEach(function (span) {
      var section = span.nextElementSibling;
      var heading = section && section.querySelector("h1, h2, h3, h4, h5, h6");
      if (heading) docs.push({ doc: span.id.slice("document-".length), heading: heading, section: section, anchor: span });
    });
    return docs;
  }

  function cover(o) {
    var links = el("dl", { class: "print-links" });
    [["在线课程", o.siteUrl], ["交互演示（二分类评价与超参数选择）", o.demoUrl], ["作业提交", o.submitUrl], ["本书 PDF", o.pdfUrl]]
      .forEach(function (pair) {
        links.appendChild(el("dt", { text: pair[0] }));
        links.appendChild(el("dd", {}, [el("a", { href: pair[1], text: pair[1] })]));
      });
    return el("section", { class: "print-cover" }, [
      el("h1", { text: o.title, class: "print-cover-title" }),
      el("p", { class: "print-subtitle", text: "混淆矩阵、ROC 与 PR 曲线、AUC 与 AP、概率校准与评价方法" }),
      el("p", { class: "print-edition", text: o.edition + " · " + o.date }),
      links,
      el("p", { class: "print-subtitle", text: "书中的数字都由代码在构建时计算；动画在印刷版中以若干帧代替，完整的动画与交互演示请见在线版。" }),
      el("p", { class: "print-licence", text: o.licence })
    ]);
  }

  function tableOfContents(o, docs) {
    var byDoc = {};
    docs.forEach(function (d) { byDoc[d.doc] = d; });
    var list = el("ol", {});
    var n = 0;
    function entry(target, title, level) {
      var li = el("li", { class: "toc-entry toc-level-" + level }, [
        el("a", { class: "toc-title", href: "#" + target, text: title }),
        el("span", { class: "toc-dots" }),
        el("span", { class: "toc-page", "data-target": target })
      ]);
      list.appendChild(li);
      n += 1;
    }
    o.toc.forEach(function (part) {
      if (part.caption) list.appendChild(el("li", { class: "toc-part", text: part.caption }));
      part.entries.forEach(function (e) {
        var d = byDoc[e.doc];
        if (!d) return;
        entry(d.heading.id, headingText(d.heading), e.level);
      });
    });
    entry("toc-answers", "附录　即时练习答案与解析", 0);
    return { node: el("nav", { class: "print-toc", "aria-label": "目录" }, [el("h2", { text: "目录" }), list]), count: n };
  }

  function printQuizzes(article) {
    var answers = el("section", { class: "print-answers print-doc-start" }, [
      el("h1", { class: "print-doc-title print-chapter", id: "toc-answers", text: "附录　即时练习答案与解析" }),
      el("p", { text: "每道题先给出正确答案，再逐一解释每个选项为什么对或错。题目见各章末尾的“即时练习”。" })
    ]);
    var quizzes = article.querySelectorAll(".quiz");
    quizzes.forEach(function (quiz) {
      var number = quiz.getAttribute("data-quiz");
      var single = quiz.getAttribute("data-kind") === "single";
      var list = el("ol", { class: "quiz-print-options" });
      var correct = "";
      quiz.querySelectorAll(".quiz-option").forEach(function (button) {
        var letter = button.getAttribute("data-option");
        var text = button.querySelector(".quiz-option-text") || button;
        if (button.getAttribute("data-correct") === "true") correct = single ? letter : text.textContent.trim();
        var li = el("li", {}, [el("strong", { text: single ? letter + ". " : "○ " })]);
        Array.prototype.slice.call(text.childNodes).forEach(function (c) { li.appendChild(c.cloneNode(true)); });
        list.appendChild(li);
      });
      var options = quiz.querySelector(".quiz-options");
      options.parentNode.insertBefore(list, options);
      options.classList.add("print-hide");
      var note = el("p", { class: "quiz-print-note" });
      note.appendChild(document.createTextNode("答案与解析见附录（"));
      note.appendChild(el("a", { href: "#answer-" + number, text: "第 " + number + " 题" }));
      note.appendChild(document.createTextNode("）。"));
      quiz.appendChild(note);

      var title = quiz.querySelector(".quiz-title");
      var block = el("div", { class: "print-answer", id: "answer-" + number }, [
        el("p", { class: "print-answer-head" }, [
          el("a", { href: "#quiz-" + number, text: (title ? title.textContent.trim() : "第 " + number + " 题") }),
          document.createTextNode("　正确答案：" + correct)
        ])
      ]);
      quiz.querySelectorAll(".quiz-explanation").forEach(function (exp) {
        var letter = exp.getAttribute("data-option");
        var ok = exp.getAttribute("data-correct") === "true";
        var button = quiz.querySelector('.quiz-option[data-option="' + letter + '"] .quiz-option-text');
        var name = single ? "选项 " + letter : "“" + (button ? button.textContent.trim() : letter) + "”";
        var body = exp.querySelector(".quiz-explanation-body");
        block.appendChild(el("div", { class: "print-option" + (ok ? " is-correct" : "") }, [
          el("p", {}, [el("span", { class: "print-option-head", text: name + (ok ? "（正确）" : "（错误）") })]),
          body ? body.cloneNode(true) : null
        ]));
      });
      answers.appendChild(block);
    });
    article.appendChild(answers);
    return quizzes.length;
  }

  /* 「再来一题」 boxes (book/_ext/quiz_variants.py): the first variant of each, printed where the box is, with its
   * answer, solution and every wrong answer's mistake (and the section that explains it) in the appendix. */
  function printVariants(article) {
    var boxes = article.querySelectorAll(".quiz-variants");
    if (!boxes.length) return 0;
    var appendix = article.querySelector(".print-answers");
    appendix.appendChild(el("h2", { class: "print-variants-title", id: "variant-answers", text: "再来一题：印刷题的答案" }));
    appendix.appendChild(el("p", { text: "在线版的每个“再来一题”都有几十道同类题；印刷版各印出其中第一道，答案与每个错误选项对应的常见错误如下。" }));
    boxes.forEach(function (box) {
      var data = JSON.parse(box.querySelector("script.variants-data").textContent);
      var v = data.variants[0], id = data.template;
      var links = {};
      box.querySelectorAll(".variants-map .variants-link").forEach(function (span) {
        var a = span.querySelector("a");
        if (a) links[span.getAttribute("data-mistake")] = a;
      });
      var question = el("div", { class: "print-variant", id: "variant-print-" + id }, [
        el("p", { class: "quiz-title" }, [el("strong", { text: "再来一题：" + data.title })])
      ]);
      v.stem.forEach(function (p) { question.appendChild(el("p", { text: p })); });
      if (v.options) {
        var list = el("ol", { class: "quiz-print-options" });
        v.options.forEach(function (o) { list.appendChild(el("li", {}, [el("strong", { text: o.letter + ". " }), document.createTextNode(o.text)])); });
        question.appendChild(list);
      } else {
        question.appendChild(el("p", { class: "print-variant-blank", text: "答：＿＿＿＿＿＿（" + v.key.instruction + "）" }));
      }
      var note = el("p", { class: "quiz-print-note" });
      note.appendChild(document.createTextNode("答案见附录（"));
      note.appendChild(el("a", { href: "#variant-answer-" + id, text: "再来一题：" + data.title }));
      note.appendChild(document.createTextNode("）；在线版还有另外 " + (data.variants.length - 1) + " 道同类题。"));
      question.appendChild(note);
      box.parentNode.insertBefore(question, box);
      box.classList.add("print-hide");

      var block = el("div", { class: "print-answer print-variant-answer", id: "variant-answer-" + id }, [
        el("p", { class: "print-answer-head" }, [
          el("a", { href: "#variant-print-" + id, text: "再来一题：" + data.title }),
          document.createTextNode("　答案：" + v.answer)
        ]),
        el("p", { text: v.solution })
      ]);
      var wrong = v.options ? v.options.filter(function (o) { return !o.correct; }).map(function (o) {
        return { shown: o.letter + ". " + o.text, mistake: o.mistake, why: o.explanation };
      }) : v.diagnoses.map(function (d) { return { shown: "答 " + d.text, mistake: d.mistake, why: d.explanation }; });
      wrong.forEach(function (w) {
        var head = el("p", {}, [el("span", { class: "print-option-head", text: w.shown + " —— 常见错误“" + data.mistakes[w.mistake] + "”" })]);
        var link = links[w.mistake];
        if (link) {
          head.appendChild(document.createTextNode("（见小节 "));
          head.appendChild(el("a", { href: link.getAttribute("href"), text: link.textContent }));
          head.appendChild(document.createTextNode("）"));
        }
        block.appendChild(el("div", { class: "print-option" }, [head, el("p", { text: w.why })]));
      });
      appendix.appendChild(block);
    });
    return boxes.length;
  }

  function printAnimations(article) {
    var frames = 0, count = 0;
    article.querySelectorAll(".animation.course-anim").forEach(function (box) {
      var all = (box.getAttribute("data-frames") || "").split(/\s+/).filter(Boolean);
      if (!all.length) return;
      var n = all.length, picks = n <= 4 ? all.map(function (_, i) { return i; })
        : [0, Math.round((n - 1) / 3), Math.round(2 * (n - 1) / 3), n - 1];
      var strip = el("div", { class: "print-strip" });
      picks.forEach(function (k) {
        strip.appendChild(el("figure", {}, [
          el("img", { src: all[k], alt: (box.getAttribute("data-alt") || "") + "（第 " + (k + 1) + " 帧）" }),
          el("figcaption", { text: "第 " + (k + 1) + " / " + n + " 帧" })
        ]));
        frames += 1;
      });
      box.parentNode.insertBefore(strip, box);
      box.classList.add("print-hide");
      count += 1;
    });
    return { animations: count, frames: frames };
  }

  function showLinkAddresses(article) {
    var n = 0;
    article.querySelectorAll('a[href^="http"]').forEach(function (a) {
      var href = a.getAttribute("href");
      if (a.closest(".print-cover") || a.textContent.trim() === href) return;
      a.appendChild(el("span", { class: "print-url", text: "（" + href + "）" }));
      n += 1;
    });
    return n;
  }

  window.coursePrint = async function (o) {
    document.querySelectorAll("#jb-print-docs-body").forEach(function (n) { n.remove(); });
    var article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
    document.querySelectorAll("img[loading]").forEach(function (img) { img.loading = "eager"; });
    document.querySelectorAll("details").forEach(function (d) { if (!d.classList.contains("hide")) d.open = true; });
    var docs = findDocuments(article, o.rootDoc);
    var levels = {};
    o.toc.forEach(function (part) { part.entries.forEach(function (e) { levels[e.doc] = e.level; }); });
    docs.forEach(function (d, i) {
      d.heading.id = "toc-" + i;
      d.heading.classList.add("print-doc-title");
      if (!levels[d.doc]) d.heading.classList.add("print-chapter");
      if (i > 0) (d.section || d.heading).classList.add("print-doc-start");
      /* The empty anchor between two documents (<span id="document-...">) stood in a block of its own: when
       * a document ended at the foot of a page, that empty line went onto the next page and the next
       * document's page break came after it, leaving a blank page.  It moves into the document it names. */
      if (d.anchor && d.section) d.section.insertBefore(d.anchor, d.section.firstChild);
    });
    var stats = { documents: docs.length };
    stats.quizzes = printQuizzes(article);
    stats.variants = printVariants(article);
    var anim = printAnimations(article);
    stats.animations = anim.animations;
    stats.stripFrames = anim.frames;
    stats.externalLinks = showLinkAddresses(article);
    var toc = tableOfContents(o, docs);
    stats.tocEntries = toc.count;
    article.insertBefore(toc.node, article.firstChild);
    article.insertBefore(cover(o), article.firstChild);
    document.title = o.title + "（" + o.edition + "）";
    await Promise.all(Array.prototype.map.call(document.images, function (img) {
      return img.decode().catch(function () { return null; });
    }));
    return stats;
  };

  /* Elements wider than the printed text column (call with the viewport as wide as that column). */
  window.coursePrintOverflow = function () {
    var article = document.querySelector("article.bd-article") || document.body;
    var right = article.getBoundingClientRect().right;
    var SLACK_PX = 10;  /* less than 3 mm into the 16 mm margin (e.g. a formula at a line end) is not cut off */
    var found = [];
    article.querySelectorAll("pre, table, img, mjx-container, .cell_output, .print-strip, .quiz, figure").forEach(function (node) {
      if (node.closest(".print-hide") || node.offsetParent === null) return;
      var box = node.getBoundingClientRect();
      if (box.right > right + SLACK_PX || node.scrollWidth > node.clientWidth + 2 && getComputedStyle(node).overflowX !== "visible") {
        var doc = node.closest("section[id]");
        var what = node.tagName.toLowerCase() + (node.className ? "." + String(node.className).split(" ")[0] : "");
        var math = what.indexOf("mjx-container") === 0 && node.closest("[data-tex]");  /* book/_ext/static_math.py */
        if (math) what += (math.getAttribute("data-display") === "1" ? " (display) " : " (inline) ") + math.getAttribute("data-tex").slice(0, 80);
        found.push(what + " in #" + (doc ? doc.id : "?") + ": " + Math.round(box.right - right) + " px too wide");
      }
    });
    return found;
  };

  /* Blocks that print.css keeps whole on one page (a code cell, its output, a table, a figure) but that are
   * taller than a page of text (maxHeight, CSS px): they and the code and outputs in them may break across
   * pages (class print-may-break; a listing then starts right under the text before it).
   * Kept whole, such a block was pushed to the next page, which it still did not fit: Chromium then left
   * the rest of the page before it empty and printed a whole page of the cell's empty frame (the
   * regression chapter's first code cell).  Call with the viewport as wide as the printed text column;
   * returns how many blocks may break. */
  window.coursePrintTallBlocks = function (maxHeight) {
    var article = document.querySelector("article.bd-article") || document.body;
    var n = 0;
    article.querySelectorAll('div.cell, div.cell_input, div[class*="highlight-"], div.highlight, .cell_output, figure, table, .quiz').forEach(function (node) {
      if (node.getBoundingClientRect().height > maxHeight) {
        node.classList.add("print-may-break");
        n += 1;
      }
    });
    return n;
  };

  window.coursePrintPageNumbers = function (pages) {
    document.querySelectorAll(".toc-page[data-target]").forEach(function (span) {
      var page = pages[span.getAttribute("data-target")];
      span.textContent = page ? String(page) : "";
    });
  };
})();
