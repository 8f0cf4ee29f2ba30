"""A fetched body as text for the model: HTML as Markdown, other text as it is.

HTML goes through markdownify (on BeautifulSoup), after a pass that keeps the page's
content and drops what only a browser needs: scripts, styles, navigation, forms, inline
SVG and data: images. Links and images point at absolute URLs, so the model can fetch
what a page links to; links within the page become plain text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from caretz.lazy import lazy_module

if TYPE_CHECKING:
    import bs4
    import markdownify
else:
    # bs4 and markdownify take ~100 ms to import; only a fetched HTML page needs them.
    bs4 = lazy_module("bs4")
    markdownify = lazy_module("markdownify")

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

# Elements that are not content.
_DROPPED = (
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object",
    "embed", "form", "button", "select", "input", "nav", "footer", "aside", "dialog",
)  # fmt: skip
_HEADER_LINK_TEXT = frozenset({"", "¶", "#", "§", "🔗", "link"})
_BLANK_LINES = re.compile(r"\n{3,}")
_LINK_SCHEMES = ("http", "https", "mailto", "ftp")
TOO_DEEP = "[this page nests its HTML deeper than caretz converts to Markdown: its text follows]"


def html_to_markdown(body: bytes, charset: str | None, base_url: str) -> tuple[str, str]:
    """(the page's title, its content as Markdown). A page nested deeper than the
    converter goes (it walks the tree by recursion) comes back as its plain text."""
    soup = bs4.BeautifulSoup(body, "html.parser", from_encoding=charset)
    title = soup.title.get_text(" ", strip=True) if soup.title is not None else ""
    for element in soup(list(_DROPPED)):
        element.decompose()
    root = _content_root(soup)
    _absolute_links(root, base_url)
    converter = markdownify.MarkdownConverter(
        heading_style="ATX", bullets="-", code_language_callback=_code_language
    )
    try:
        text = converter.convert_soup(root)
    except RecursionError:
        text = f"{TOO_DEEP}\n\n{root.get_text(chr(10), strip=True)}"
    text = "\n".join(line.rstrip() for line in text.splitlines())
    return title, _BLANK_LINES.sub("\n\n", text).strip()


def decode_text(body: bytes, charset: str | None) -> str:
    """A text body as str: its declared charset, else UTF-8; bytes that do not decode
    become U+FFFD rather than an error."""
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _content_root(soup: BeautifulSoup) -> Any:
    """The page's main content where it says which that is (`<main>`, a lone `<article>`,
    role=main), else its body."""
    main = soup.find("main") or soup.find(role="main")
    if main is not None:
        return main
    articles = soup.find_all("article")
    if len(articles) == 1:
        return articles[0]
    return soup.body or soup


def _absolute_links(root: Tag, base_url: str) -> None:
    for link in root.find_all("a"):
        href = str(link.get("href") or "").strip()
        text = link.get_text(strip=True)
        if href.startswith("#") and text in _HEADER_LINK_TEXT:
            link.decompose()  # a heading's permalink
        elif not href or href.startswith("#") or not _linkable(href):
            link.unwrap()  # same-page or script links: the text alone
        else:
            link["href"] = _absolute(base_url, href)
    for image in root.find_all("img"):
        source = str(image.get("src") or "").strip()
        if not source or source.startswith("data:") or not _absolute(base_url, source):
            image.decompose()
        else:
            image["src"] = _absolute(base_url, source)


def _absolute(base_url: str, href: str) -> str:
    """`href` as an absolute URL; "" for one that is no URL (`http://[::1`)."""
    try:
        return urljoin(base_url, href)
    except ValueError:
        return ""


def _linkable(href: str) -> bool:
    try:
        scheme = urlsplit(href).scheme.lower() if ":" in href else ""
    except ValueError:
        return False
    return scheme in ("", *_LINK_SCHEMES) and bool(_absolute("http://a/", href))


def _code_language(element: Tag) -> str | None:
    """A code block's language from its `language-x` / `lang-x` class (highlight.js,
    Prism, mdBook, Sphinx's `highlight-x` on the wrapper)."""
    tags = [element, *element.find_all("code"), element.parent]
    for tag in tags:
        if tag is None:
            continue
        for name in tag.get("class") or ():
            for prefix in ("language-", "lang-", "highlight-"):
                if name.startswith(prefix) and len(name) > len(prefix):
                    return name[len(prefix) :]
    return None
