"""Checks of the formulas of a built page, shared by the browser tests.

The formulas are typeset at build time (book/_ext/static_math.py): a page must show no TeX, load no
math script, and every formula must carry its MathML (for a screen reader) and its TeX (``data-tex``),
be drawn as SVG in the colour of its text (dark mode), and every character it draws must be defined on
the page (a glyph path of the page's ``svg.mjx-glyphs``).
"""

from __future__ import annotations

#: JavaScript for Playwright's ``evaluate``: every problem with the formulas of the page's article, as strings.
MATH_PROBLEMS = r"""() => {
  const out = [];
  const article = document.querySelector('article.bd-article') || document.body;
  for (const m of article.querySelectorAll('span.math, div.math')) {
    const what = (m.dataset.tex || m.textContent).trim().slice(0, 60);
    if (!m.querySelector(':scope > mjx-container')) out.push(`formula not typeset: ${what}`);
    else if (!m.dataset.tex) out.push(`formula without its TeX (data-tex): ${what}`);
    else if (!m.querySelector('mjx-assistive-mml math')) out.push(`formula without MathML: ${what}`);
    else if (!m.querySelector(':scope > mjx-container > svg')) out.push(`formula not drawn as SVG: ${what}`);
    else {
      const svg = m.querySelector(':scope > mjx-container > svg');
      if (getComputedStyle(svg.querySelector('g')).fill !== getComputedStyle(svg.parentElement).color) {
        out.push(`formula not in the colour of its text: ${what}`);
      }
      for (const use of svg.querySelectorAll('use')) {
        const glyph = document.getElementById((use.getAttribute('href') || '').slice(1));
        if (!glyph || glyph.tagName !== 'path' || !glyph.closest('svg.mjx-glyphs')) {
          out.push(`formula draws an undefined glyph ${use.getAttribute('href')}: ${what}`);
          break;
        }
      }
    }
  }
  const copy = article.cloneNode(true);
  copy.querySelectorAll('pre, code, .highlight, .math, script, style').forEach(e => e.remove());
  const text = copy.textContent;
  const tex = text.match(/\\[(\[]|\$\$|\\(?:frac|mathrm|operatorname|hat|sum|tau)\b/);
  if (tex) out.push(`TeX in the text: …${text.slice(Math.max(0, tex.index - 30), tex.index + 40)}…`);
  if (window.MathJax || [...document.querySelectorAll('script[src]')].some(s => /mathjax/i.test(s.src))) {
    out.push('a math script is loaded');
  }
  return out;
}"""
