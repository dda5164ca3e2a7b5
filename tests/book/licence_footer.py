"""The licence statement a published page's footer must carry (``book/_ext/licence_notice.py``): both licences,
each linked to its deed, and a link that resolves to the book's page 版权与许可; never "all rights reserved".
Used for the book's pages (tests/book/test_public_course.py) and the guides' (tests/docs/test_guide_footer.py)."""

from __future__ import annotations

from urllib.parse import urljoin

from bs4 import BeautifulSoup

from coursebook import licence


def footer_problem(page_html: str, page_url: str, site_url: str) -> str | None:
    """What is wrong with the licence footer of the page ``page_html`` served at ``page_url`` (``None``: nothing);
    ``site_url`` is the book's address, under which the page 版权与许可 lives."""
    if "版权所有" in page_html:
        return "states 版权所有 (all rights reserved)"
    footer = BeautifulSoup(page_html, "html.parser").select_one("footer p.copyright")
    if footer is None:
        return "no copyright line"
    text = footer.get_text(" ", strip=True)
    if licence.TEXT.short not in text or licence.CODE.short not in text:
        return f"the footer does not name both licences: {text!r}"
    hrefs = {a.get_text(strip=True): a["href"] for a in footer.find_all("a")}
    if hrefs.get(f"{licence.TEXT.short} 许可") != licence.TEXT.url or hrefs.get(f"{licence.CODE.short} 许可") != licence.CODE.url:
        return f"the licences are not linked to their deeds: {hrefs}"
    target = urljoin(page_url, hrefs.get("“版权与许可”", ""))  # relative, or rooted (the 404 page)
    if target != f"{site_url}{licence.PAGE}.html":
        return f"the link to 版权与许可 goes to {target}"
    return None
