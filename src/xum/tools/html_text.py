"""HTML to Markdown for `web_fetch`: the page a model reads, without the page chrome.

Built on `markdownify` over a `beautifulsoup4` tree (the stdlib `html.parser` backend), both
imported only when `web_fetch` reads an HTML page. They replaced a converter of our own on the
stdlib parser after a comparison on hand-written copies of real pages (tests/fixtures/html/: a
Sphinx documentation page, a GitHub README as GitHub renders it, a blog post with code), against
html2text and html-to-markdown too:

* markdownify's Markdown was the one a model reads best: tables stay tables (ours broke every
  table with a header, a blank line after the separator, and dropped links inside cells), lists
  nest and keep their paragraphs, definition lists (API signatures) keep their shape, code
  blocks are fenced, and what it escapes can be switched off (an escaped `load\\_settings` is
  not the identifier any more);
* html2text indents code blocks instead of fencing them (no language, easy to misread as
  prose) and writes tables without their outer pipes;
* html-to-markdown turned the inline SVG icons of a GitHub page into base64 `data:` images, a
  few kilobytes of noise per heading.

What is xum's own here is the pruning before the conversion, which no converter does: scripts,
styles, navigation, headers and footers of the site, forms, hidden elements and icons are
removed; permalink anchors (`¶`) go; links are made absolute against the page's URL (a model
cannot follow `../genindex.html`); images become `[image: alt]` (their URLs are rarely worth the
tokens; badges disappear into their link text); task-list checkboxes become `[x]` / `[ ]`; code
blocks get the language their classes name. A page nested too deeply for the converter's
recursion degrades to its plain text rather than failing.

Cost, measured on the fixtures: the first conversion imports bs4 and markdownify (0.25-0.35 s);
after that a page takes 10-25 ms, 2 to 15 times the old streaming converter (a tree is built
first). That is small next to the fetch itself, and it runs on a worker thread, off the event
loop (`WebFetchTool.run`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag
    from markdownify import MarkdownConverter

# Elements whose whole content is page chrome or machinery, never text for the reader.
_DROP_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "head",
    "nav",
    "footer",
    "aside",
    "form",
    "button",
    "select",
    "textarea",
    "dialog",
    "clipboard-copy",  # GitHub's copy buttons
)
# ARIA landmarks of the site around the content (a Sphinx sidebar is a <div role=navigation>).
_DROP_ROLES = frozenset({"navigation", "search", "banner", "contentinfo", "complementary"})
_PERMALINK_TEXT = frozenset({"", "¶", "§", "#", "🔗", "⚓"})
_LANGUAGE_CLASS = re.compile(r"^(?:language|lang|highlight-source|highlight)-([\w+#.-]+)$")
_SPACE = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n{3,}")


def html_to_text(html: str, base_url: str) -> tuple[str, str]:
    """(title, readable Markdown) of an HTML document; links are made absolute against
    `base_url`. Never raises for bad HTML."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    title = _SPACE.sub(" ", soup.title.get_text()).strip() if soup.title else ""
    _prune(soup, base_url)
    try:
        text = _converter().convert_soup(soup)
    except RecursionError:  # nesting deeper than the converter's recursion: plain text
        text = soup.get_text("\n")
    lines = [line.rstrip() for line in text.split("\n")]
    return title, _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _prune(soup: BeautifulSoup, base_url: str) -> None:
    from bs4 import Tag

    for element in soup.find_all((*_DROP_TAGS, "title")):
        element.decompose()
    for element in soup.find_all(_hidden):
        if not element.decomposed:
            element.decompose()
    for box in soup.find_all("input"):
        if str(box.get("type", "")).lower() == "checkbox":
            box.replace_with("[x]" if box.has_attr("checked") else "[ ]")
        else:
            box.decompose()
    for image in soup.find_all("img"):
        alt = _SPACE.sub(" ", str(image.get("alt") or "")).strip()
        if alt:
            image.replace_with(f"[image: {alt}]")
        else:
            image.decompose()
    for cell in soup.find_all(("td", "th")):
        # A `|` inside a cell would end it early and shift every column after it.
        for piece in cell.find_all(string=True):
            if "|" in piece:
                piece.replace_with(piece.replace("|", "\\|"))
    for link in soup.find_all("a"):
        assert isinstance(link, Tag)
        href = str(link.get("href") or "").strip()
        text = link.get_text().strip()
        if href.startswith("#") and text in _PERMALINK_TEXT:
            link.decompose()  # a permalink icon
        elif not href or href.startswith("#") or href.lower().startswith(("javascript:", "data:")):
            link.unwrap()  # keep the words, drop a link nobody can follow from here
        else:
            link.attrs = {"href": urljoin(base_url, href)}  # no titles: noise for a reader


def _hidden(element: Tag) -> bool:
    """Chrome by its attributes: hidden, an ARIA landmark of the site, an icon, display:none."""
    attrs = element.attrs
    if not attrs:
        return False
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).lower() == "true":
        return True
    if str(attrs.get("role", "")).lower() in _DROP_ROLES:
        return True
    style = str(attrs.get("style", "")).replace(" ", "").lower()
    return "display:none" in style


def _language(pre: Tag) -> str:
    """The language a code block's classes name (`language-python` on the <pre> or its <code>,
    `highlight-source-shell` / `highlight-toml` on a wrapper), or ''."""
    from bs4 import Tag

    code = pre.find("code")
    parent = pre.parent
    for element in (pre, code, parent, parent.parent if parent is not None else None):
        if not isinstance(element, Tag):
            continue
        for name in element.get_attribute_list("class"):
            match = _LANGUAGE_CLASS.match(str(name))
            if match and match.group(1) not in ("notranslate", "default"):
                return match.group(1)
    return ""


_CONVERTER: MarkdownConverter | None = None


def _converter() -> MarkdownConverter:
    """markdownify's converter with xum's options (made once; it keeps no state per page)."""
    global _CONVERTER
    if _CONVERTER is None:
        from markdownify import ATX, MarkdownConverter

        class Converter(MarkdownConverter):
            def convert_br(self, el: Tag, text: str, parent_tags: set[str]) -> str:
                # A plain newline: Markdown's two-space hard break is invisible to a reader
                # and lost when trailing spaces are trimmed.
                return text + " " if "_inline" in parent_tags else "\n" + text

        _CONVERTER = Converter(
            heading_style=ATX,
            bullets="-",
            escape_asterisks=False,
            escape_underscores=False,
            escape_misc=False,
            code_language_callback=_language,
            autolinks=False,
        )
    return _CONVERTER
