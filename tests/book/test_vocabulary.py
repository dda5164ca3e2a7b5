"""One word per concept: the glossary data (book/glossary/terms.yml) against the book's prose.

* the data is well formed and every term's ``introduced`` label exists in the book;
* no variant of a term (another word for the same concept, listed in the glossary) appears in the
  prose of a page (outside code and math; figure captions included), in the quiz data or in the
  glossary's own definitions -- only the glossary lists them;
* every term is defined before it is used: reading the pages in the order of ``_toc.yml``, the first
  use of a term (overview pages, headings and table rows excepted) does not come before the section
  that introduces it, unless the data names that page in the term's ``forward`` list (a deliberate,
  reviewed forward reference, such as a preview of the next section or a link to a later chapter);
* the text that code cells put in front of readers (figure labels, table headers, printed lines) uses
  the chosen terms as well.

One meaning per symbol, against the notation page (book/notation.md):

* the page lists every symbol once, each at an existing label;
* every symbol written in the book's formulas (pages, quiz data, glossary) is listed there, so a new
  symbol cannot slip in unexplained;
* the forms that once gave a symbol a second meaning (k for algorithms, p for the p-value, sigma for
  the logistic function, an italic N for the normal law ...) do not come back.
"""

from __future__ import annotations

import ast
import importlib.util
import re

import pytest
import yaml

from .prose import ROOT, Source, glossary_sources, joined, page_prose, quiz_sources, toc_docs

_spec = importlib.util.spec_from_file_location("course_glossary_ext", ROOT / "book" / "_ext" / "course_glossary.py")
glossary_ext = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(glossary_ext)

DATA = glossary_ext.load_terms()
TERMS = DATA["terms"]
GLOSSARY_PAGE = "book/glossary"


PAGES = toc_docs()
RAW = {doc: (ROOT / f"{doc}.md").read_text(encoding="utf-8") for doc in PAGES}
PROSE = {doc: page_prose(text) for doc, text in RAW.items()}


def labels() -> dict[str, tuple[int, int]]:
    """``label -> (page index in reading order, offset)`` of every ``(label)=`` target."""
    found = {}
    for i, doc in enumerate(PAGES):
        for m in re.finditer(r"^\(([A-Za-z0-9_-]+)\)=[ \t]*$", RAW[doc], re.M):
            found[m.group(1)] = (i, m.start())
    return found


LABELS = labels()
HEADINGS = re.compile(r"^(?:#+ |\|).*$", re.M)   # headings and table rows announce, they do not use


def variant_hits(source: Source) -> list[str]:
    """Every variant found in one text, as readable lines."""
    text = joined(source.text)
    hits = []
    for term in TERMS:
        for variant in term.get("variants", []):
            pattern, excuses = glossary_ext.variant_rule(variant)
            for m in pattern.finditer(text):
                if any(e.start() <= m.start() and m.end() <= e.end() for ex in excuses for e in ex.finditer(text)):
                    continue
                line = text.count("\n", 0, m.start()) + 1 if "\n" in text else None
                context = text[max(0, m.start() - 12):m.end() + 12].replace("\n", " ")
                where = f"{source.where}:{line}" if line else source.where
                hits.append(f"{where}: “{m.group(0)}” → 应写“{term['term']}”（…{context}…）")
    return hits


# --------------------------------------------------------------------------------------- data
def test_every_page_of_the_toc_exists_and_the_glossary_is_listed():
    assert GLOSSARY_PAGE in PAGES
    assert all((ROOT / f"{doc}.md").is_file() for doc in PAGES)


def test_terms_are_introduced_at_existing_labels():
    missing = {t["id"]: t["introduced"] for t in TERMS if t["introduced"] not in LABELS}
    assert not missing, f"术语表引用了不存在的标签：{missing}"


def test_every_term_is_used_in_the_book():
    text = joined("".join(PROSE[d] for d in PAGES if d != GLOSSARY_PAGE))
    unused = [t["term"] for t in TERMS if not any(w in text for w in t.get("search", [t["term"]]))]
    assert not unused, f"书中没有用到这些术语：{unused}"


def test_a_variant_is_never_a_chosen_term():
    chosen = {w for t in TERMS for w in [t["term"], *t.get("search", [])]}
    for term in TERMS:
        for variant in term.get("variants", []):
            pattern, _ = glossary_ext.variant_rule(variant)
            clash = [w for w in chosen if pattern.fullmatch(w)]
            assert not clash, f"{term['id']} 的其他说法 {variant!r} 与所选术语 {clash} 相同"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("按查准率排序", 1), ("正类的可靠度图", 1), ("十个等宽区间", 1), ("95% 置信区间", 0), ("区间 $[0,1]$ 中", 0),
     ("一个极小的反例", 0), ("负类（反类）", 1), ("精确率与召回率", 0), ("它过分自信", 1)],
)
def test_the_rules_themselves(text, expected):
    """Hits and excuses of the rules on hand-made sentences (so the check below can fail)."""
    assert len(variant_hits(Source("probe", page_prose(text)))) == expected, variant_hits(Source("probe", page_prose(text)))


# ---------------------------------------------------------------------------------- the prose
@pytest.mark.parametrize("doc", [d for d in PAGES if d != GLOSSARY_PAGE])
def test_page_uses_only_the_chosen_terms(doc):
    hits = variant_hits(Source(f"{doc}.md", PROSE[doc]))
    assert not hits, "请改用术语表选定的词：\n" + "\n".join(hits)


def test_pages_outside_the_toc_use_only_the_chosen_terms():
    others = [p for p in sorted((ROOT / "book").rglob("*.md")) if "_build" not in p.parts
              and str(p.relative_to(ROOT).with_suffix("")) not in PAGES]
    hits = [h for p in others for h in variant_hits(Source(str(p.relative_to(ROOT)), page_prose(p.read_text(encoding="utf-8"))))]
    assert not hits, "\n".join(hits)


def test_quizzes_use_only_the_chosen_terms():
    hits = [h for s in quiz_sources() for h in variant_hits(s)]
    assert not hits, "请改用术语表选定的词：\n" + "\n".join(hits)


def test_glossary_definitions_use_only_the_chosen_terms():
    hits = [h for s in glossary_sources() for h in variant_hits(s)]
    assert not hits, "\n".join(hits)


# ------------------------------------------------------------------------- define before use
def first_use(words: list[str], skip: set[str], after: tuple[int, int]) -> tuple[int, int, str] | None:
    """``(page index, offset, doc)`` of the first use of any of ``words`` in reading order.

    Pages in ``skip`` are passed over, except the introducing page (``after``), where only the uses
    before its label are passed over.
    """
    for i, doc in enumerate(PAGES):
        if doc in skip and i != after[0]:
            continue
        text = HEADINGS.sub(lambda m: " " * len(m.group(0)), PROSE[doc])
        positions = [m.start() for w in words for m in re.finditer(re.escape(w), text)]
        if doc in skip:
            positions = [p for p in positions if p >= after[1]]
        if positions:
            return i, min(positions), doc
    return None


@pytest.mark.parametrize("term", TERMS, ids=[t["id"] for t in TERMS])
def test_term_is_defined_before_it_is_used(term):
    skip = set(DATA["overview_pages"]) | set(term.get("forward", []))
    page, offset = LABELS[term["introduced"]]
    use = first_use(term.get("search", [term["term"]]), skip, (page, offset))
    assert use is not None, f"“{term['term']}”在正文中（预告与概览之外）没有出现"
    used_page, used_offset, doc = use
    before = (used_page, used_offset) < (page, offset)
    context = PROSE[doc][max(0, used_offset - 20):used_offset + 20].replace("\n", " ").strip()
    assert not before, (f"“{term['term']}”在 {doc}.md 中先用到（…{context}…），"
                        f"却在 {PAGES[page]}.md 的 {term['introduced']} 才定义")


# ------------------------------------------------------------------- text printed by code cells
_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def cell_texts(raw: str, where: str) -> list[Source]:
    """The Chinese string literals of a page's code cells (what labels, tables and prints show)."""
    out = []
    for m in _CELL.finditer(raw):
        body = m.group(2)
        # a YAML block of cell options: keep its lines (as blank ones) so line numbers stay right
        body = re.sub(r"\A---\n.*?\n---\n", lambda b: "\n" * b.group(0).count("\n"), body, flags=re.S)
        code = "\n".join("" if line.startswith((":", "%", "!")) else line for line in body.split("\n"))
        first_line = raw.count("\n", 0, m.start(2)) + 1
        tree = ast.parse(code, filename=where)          # a cell that does not parse is a bug of its own
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CJK.search(node.value):
                out.append(Source(f"{where}:{first_line + node.lineno - 1}", page_prose(node.value)))
    return out


def test_cell_texts_are_found():
    """The extraction sees labels, f-strings and cells with a YAML options block."""
    raw = ("```{code-cell} ipython3\n---\ntags: [remove-input]\n---\nax.set_xlabel(\"召回率 Recall\")\n```\n"
           "```{code-cell} ipython3\n:tags: [hide-input]\nprint(f\"{n} 个正例\")\n```\n")
    texts = cell_texts(raw, "probe.md")
    assert [s.where for s in texts] == ["probe.md:5", "probe.md:9"]
    assert sum(len(variant_hits(s)) for s in texts) == 2


@pytest.mark.parametrize("doc", [d for d in PAGES if d != GLOSSARY_PAGE])
def test_code_cells_show_only_the_chosen_terms(doc):
    hits = [h for s in cell_texts(RAW[doc], f"{doc}.md") for h in variant_hits(s)]
    assert not hits, "代码单元格输出给读者的文字（图注、表头、打印）也要用术语表选定的词：\n" + "\n".join(hits)


# ----------------------------------------------------------------------------- one meaning per symbol
NOTATION_PAGE = "book/notation"
_DISPLAY = re.compile(r"\$\$(.*?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)([^$\n]+?)(?<!\\)\$")
_NAMED = re.compile(r"\\(?:mathrm|text|operatorname|textsf|texttt)\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|[A-Za-z])"
                    r"|\\(?:begin|end)\s*\{[a-z*]+\}")
_SCRIPT = re.compile(r"[_^]\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|[A-Za-z0-9+\-*])")
_DECOR = r"(?:\\(?:hat|widehat|bar|tilde|widetilde|mathcal|boldsymbol|mathbb)\s*\{?\s*)*"
_TOKEN = re.compile(_DECOR + r"(\\[A-Za-z]+|[A-Za-z])")
GREEK = set("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho "
            "sigma tau upsilon phi varphi chi psi omega varpi varrho varsigma Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi "
            "Omega ell".split())


def math_spans(text: str) -> list[str]:
    """The formulas of a MyST text (display and inline), outside code cells."""
    text = _CELL.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    spans = [m.group(1) for m in _DISPLAY.finditer(text)]
    return spans + [m.group(1) for m in _INLINE.finditer(_DISPLAY.sub(" ", text))]


def symbols(formula: str) -> set[str]:
    r"""The symbols of a formula: letters and Greek letters with their accents (``\hat\theta``), without
    sub- and superscripts (those only number), and without upright names (\mathrm, \operatorname, \text)."""
    s = _SCRIPT.sub(" ", _NAMED.sub(" ", formula))
    found = set()
    for m in _TOKEN.finditer(s):
        if m.group(1).startswith("\\") and m.group(1)[1:] not in GREEK:
            continue                                     # \frac, \sum, \ln ...
        found.add(re.sub(r"[\s{]", "", m.group(0)))
    return found


def notation_rows(raw: str) -> list[tuple[int, list[str], str, str]]:
    """``(line, symbols written in the first cell, meaning, label)`` for every row of the notation tables."""
    rows = []
    for i, line in enumerate(raw.split("\n"), 1):
        m = re.match(r"^\|\s*(\$.*?\$)\s*\|\s*(.+?)\s*\|\s*\{ref\}`([^`]+)`\s*\|\s*$", line)
        if m:
            items = [re.sub(r"\s+", "", x) for x in re.split(r",\\\s", m.group(1).strip("$"))]
            rows.append((i, items, m.group(2), m.group(3)))
    return rows


NOTATION = notation_rows(RAW[NOTATION_PAGE])


def data_texts() -> list[Source]:
    """Every string of the quiz data and the glossary data (formulas included)."""
    out = []
    for rel in ("book/quizzes/quizzes.yml", "book/glossary/terms.yml"):
        def walk(node, where):
            if isinstance(node, str):
                out.append(Source(where, node))
            elif isinstance(node, dict):
                for key, value in node.items():
                    walk(value, f"{where}.{key}")
            elif isinstance(node, list):
                for i, value in enumerate(node):
                    walk(value, f"{where}[{i}]")
        walk(yaml.safe_load((ROOT / rel).read_text(encoding="utf-8")), rel)
    return out


def test_symbol_extraction():
    assert symbols(r"\hat\theta_{(i)}+\bar R^2-\operatorname{logit}^{-1}(s_i)") == {r"\hat\theta", r"\barR", "s"}
    assert symbols(r"\mathcal N(\mu_+,\sigma^2)\,\mathrm{d}x") == {r"\mathcalN", r"\mu", r"\sigma", "x"}
    assert symbols(r"n_{\text{成}}\le\frac{k}{n}") == {"n", "k"}
    assert symbols(r"\begin{aligned}u&=1\\\\ w\end{aligned}") == {"u", "w"}


def test_notation_page_is_read():
    assert len(NOTATION) > 60
    assert any(items == ["k"] for _, items, _, _ in NOTATION)


def test_notation_lists_each_symbol_once():
    seen: dict[str, int] = {}
    twice = []
    for line, items, _, _ in NOTATION:
        for item in items:
            if item in seen:
                twice.append(f"{item}（第 {seen[item]} 行和第 {line} 行）")
            seen.setdefault(item, line)
    assert not twice, "符号表中同一个符号出现了两次，也就是有两种含义：" + "、".join(twice)


def test_notation_points_to_existing_sections():
    missing = [f"第 {line} 行：{label}" for line, _, _, label in NOTATION if label not in LABELS]
    assert not missing, "符号表的“引入”指向不存在的标签：" + "；".join(missing)


def listed_symbols() -> set[str]:
    return {s for _, items, _, _ in NOTATION for item in items for s in symbols(item)}


def test_every_symbol_of_the_book_is_on_the_notation_page():
    listed = listed_symbols()
    sources = [Source(f"{d}.md", RAW[d]) for d in PAGES if d not in (NOTATION_PAGE, GLOSSARY_PAGE)] + data_texts()
    missing: dict[str, list[str]] = {}
    for source in sources:
        for formula in math_spans(source.text):
            for symbol in symbols(formula) - listed:
                missing.setdefault(symbol, []).append(source.where)
    report = [f"${s}$：{sorted(set(w))[:3]}" for s, w in sorted(missing.items())]
    assert not missing, "这些符号没有列在符号表（book/notation.md）中，请列出它的唯一含义或改用已有的符号：\n" + "\n".join(report)


# Forms that once gave a symbol a second meaning (issue 29, item 11), each with the symbol's one meaning.
RETIRED = [
    (r"\\sigma\s*(?:\\bigl)?\(", "σ 只表示标准差；logistic 函数写作 \\operatorname{logit}^{-1}"),
    (r"(?<!\\mathcal )(?<!\\mathcal)(?<![\\A-Za-z{])N\s*\(", "N 只表示数据集个数；正态分布写作 \\mathcal N"),
    (r"\\mathbb\s*\{?P\b|(?<![\\A-Za-z])P\s*\((?!\\tau|s_)", "概率写作 \\Pr；P 只表示精确率（P(\\tau) 是阈值 \\tau 下的精确率）"),
    (r"\\mathrm\s*\{?B\}?\s*\(\s*[A-Za-z\\]", "二项分布写作 \\operatorname{Bin}（正体 B 只是 ROC 平面上一个点的名字）"),
    (r"(?<![\\A-Za-z])q(?!_\\alpha)(?![A-Za-z])", "q 只出现在 Nemenyi 检验的 q_α 中；真实概率是 η，随机猜测的概率是 λ"),
    (r"(?<![\\A-Za-z])e_\{", "e 只表示自然对数的底；McNemar 检验的计数是 n_{01}、n_{10}"),
    (r"(?<![\\A-Za-z])H\s*\(", "H 只出现在原假设 H_0 中"),
    (r"\\(?:in|sum_\{?[ij])\s*\\mathcal\s*\{?[PN]\b", "\\mathcal N 只表示正态分布"),
    (r"(?<![\\A-Za-z])m\s*=\s*\d|(?<![\\A-Za-z])m\\to", "m 只表示校准函数 m(s)；样本数是 n"),
    (r"(?<![\\A-Za-z])T\s*=\s*m\(S\)", "T 只表示温度；重新校准后的报告是 \\tilde S"),
]
RETIRED_PROSE = [
    (r"\$k\$\s*个(?:算法|模型|学习器)", "k 只表示交叉验证的折数；参与比较的模型个数是 L"),
    (r"\$p\$\s*值|(?:检验|双侧|显著)[^。$]{0,40}\$p\s*=\s*\$|\$p\s*[<>]", "p 值写作一个词，不用数学符号 p（p_i 是预测概率）"),
    (r"\$p\$\s*次|特征数\s*\$p\$", "p 只用于预测概率 p_i；重复次数是 r，特征个数是 n_特"),
    (r"温度\s*\$\\(?:theta|tau)", "温度写作 T"),
]


def retired_hits(source: Source) -> list[str]:
    hits = []
    for formula in math_spans(source.text):
        for pattern, why in RETIRED:
            if re.search(pattern, formula):
                hits.append(f"{source.where}：${formula.strip()[:60]}$ —— {why}")
    for pattern, why in RETIRED_PROSE:
        for m in re.finditer(pattern, source.text):
            hits.append(f"{source.where}：{m.group(0)} —— {why}")
    return hits


@pytest.mark.parametrize(
    ("text", "expected"),
    [(r"随机判正的概率 $q$", 1), (r"$\sigma(2z)$", 1), (r"$X\sim N(0,1)$", 1), (r"$\mathcal N(0,1)$", 0),
     (r"在 $k$ 个算法上排名", 1), (r"$k$ 折交叉验证", 0), (r"双侧 $p$ 值为 $0.03$", 1), (r"$p_i$ 与 $y_i$", 0),
     (r"$\mathrm{CD}=q_\alpha\sqrt{2}$", 0), (r"检验给出 $p=$ 0.03", 1), (r"最低点出现在 $p=$ 0.3", 0),
     (r"$\mathrm{B}(0.7,0.7)$", 0), (r"$\mathrm{B}(n_+,q)$", 2), (r"$P(s_i)$", 0), (r"$\Pr(S_+>S_-)$", 0), (r"$P(S_+>S_-)$", 1), (r"$P(\tau)$", 0),
     (r"温度 $\theta$", 1), (r"$\sum_{i \in \mathcal{P}} \ln s_i$", 1)],
)
def test_the_retired_forms_themselves(text, expected):
    assert len(retired_hits(Source("probe", text))) == expected, retired_hits(Source("probe", text))


def seed_quiz_numbers() -> set[int]:
    """The twelve seed quizzes stay exactly as the seed has them (issue 29), retired forms included."""
    return set(range(1, 13))


def test_no_symbol_takes_back_a_retired_meaning():
    sources = [Source(f"{d}.md", RAW[d]) for d in PAGES if d != NOTATION_PAGE]
    quizzes = yaml.safe_load((ROOT / "book/quizzes/quizzes.yml").read_text(encoding="utf-8"))["quizzes"]
    sources += [Source(f"book/quizzes/quizzes.yml: 第 {q['number']} 题", yaml.safe_dump(q, allow_unicode=True))
                for q in quizzes if q["number"] not in seed_quiz_numbers()]
    sources += [s for s in data_texts() if s.where.startswith("book/glossary")]
    hits = [h for s in sources for h in retired_hits(s)]
    assert not hits, "符号又有了第二种含义（见符号表 book/notation.md）：\n" + "\n".join(hits)
