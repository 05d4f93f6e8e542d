"""HTML to readable Markdown-ish text, on the stdlib parser (no dependency, no rendering).

It keeps what a model needs to read a page: headings, paragraphs, links as `[text](url)`, lists,
code and preformatted blocks, quotes, simple tables. Scripts, styles, navigation and other
page chrome are dropped. It is a reader, not a faithful converter: malformed HTML degrades to
plain text rather than failing.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

# Content inside these is never text for the reader.
_DROP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "canvas",
        "iframe",
        "object",
        "head",
        "nav",
        "footer",
        "aside",
        "form",
        "button",
        "select",
        "dialog",
    }
)
_BLOCK = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "figure",
        "figcaption",
        "address",
        "details",
        "summary",
        "dl",
        "dt",
        "dd",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "caption",
        "center",
        "fieldset",
        "legend",
        "body",
        "html",
    }
)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SPACE = re.compile(r"[ \t\r\n\f\v]+")


class _Converter(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.title = ""
        self._out: list[str] = []
        self._drop_depth = 0
        self._drop_stack: list[str] = []
        self._in_title = False
        self._pre_depth = 0
        self._lists: list[list[int]] = []  # one [counter] per open list; counter < 0 = bullets
        self._links: list[tuple[str | None, int]] = []  # (href, output index where text starts)
        self._quotes: list[int] = []  # output index where each open blockquote starts
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._rows_emitted = 0

    # -- output helpers ----------------------------------------------------------------------

    def _emit(self, text: str) -> None:
        if self._cell is not None:
            self._cell.append(text)
        else:
            self._out.append(text)

    def _break(self, blank: bool = True) -> None:
        """End the current block: one newline, or a blank line between blocks."""
        if self._cell is not None:
            self._cell.append(" ")
            return
        joined_tail = "".join(self._out[-3:])
        want = "\n\n" if blank else "\n"
        if not self._out or joined_tail.endswith(want):
            return
        if joined_tail.endswith("\n") and blank:
            self._out.append("\n")
        else:
            self._out.append(want)

    # -- parser callbacks --------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":  # lives in <head>, which is otherwise dropped
            self._in_title = True
            return
        if self._drop_depth:
            if tag in _DROP:
                self._drop_depth += 1
            return
        if tag in _DROP:
            self._drop_depth = 1
            return
        attr = dict(attrs)
        if tag in _HEADINGS:
            self._break()
            self._emit("#" * _HEADINGS[tag] + " ")
        elif tag in _BLOCK:
            self._break()
        elif tag == "br":
            self._emit("\n")
        elif tag == "hr":
            self._break()
            self._emit("---")
            self._break()
        elif tag in ("ul", "ol"):
            self._break(blank=not self._lists)
            self._lists.append([0 if tag == "ol" else -1])
        elif tag == "li":
            self._break(blank=False)
            indent = "  " * max(0, len(self._lists) - 1)
            if self._lists and self._lists[-1][0] >= 0:
                self._lists[-1][0] += 1
                self._emit(f"{indent}{self._lists[-1][0]}. ")
            else:
                self._emit(f"{indent}- ")
        elif tag == "pre":
            self._break()
            self._emit("```\n")
            self._pre_depth += 1
        elif tag == "code" and not self._pre_depth:
            self._emit("`")
        elif tag in ("strong", "b"):
            self._emit("**")
        elif tag in ("em", "i"):
            self._emit("*")
        elif tag == "blockquote":
            self._break()
            self._quotes.append(len(self._out))
        elif tag == "a":
            self._links.append((attr.get("href"), len(self._out)))
        elif tag == "img":
            alt = (attr.get("alt") or "").strip()
            if alt:
                self._emit(f"[image: {alt}]")
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if self._drop_depth:
            if tag in _DROP:
                self._drop_depth -= 1
            return
        if tag in _HEADINGS or tag in _BLOCK:
            self._break()
        elif tag in ("ul", "ol"):
            if self._lists:
                self._lists.pop()
            self._break(blank=not self._lists)
        elif tag == "pre":
            if self._pre_depth:
                self._pre_depth -= 1
                tail = "".join(self._out[-1:])
                self._emit("```" if tail.endswith("\n") else "\n```")
                self._break()
        elif tag == "code" and not self._pre_depth:
            self._emit("`")
        elif tag in ("strong", "b"):
            self._emit("**")
        elif tag in ("em", "i"):
            self._emit("*")
        elif tag == "blockquote" and self._quotes:
            start = self._quotes.pop()
            quoted = "".join(self._out[start:]).strip("\n")
            del self._out[start:]
            self._out.append("\n".join(f"> {line}".rstrip() for line in quoted.split("\n")))
            self._break()
        elif tag == "a":
            self._close_link()
        elif tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(_SPACE.sub(" ", "".join(self._cell)).strip().replace("|", "\\|"))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            row, self._row = self._row, None
            if row:
                self._out.append("| " + " | ".join(row) + " |\n")
                if self._rows_emitted == 0:
                    self._out.append("|" + " --- |" * len(row) + "\n")
                self._rows_emitted += 1
        if tag == "table":
            self._rows_emitted = 0

    def _close_link(self) -> None:
        if not self._links:
            return
        href, start = self._links.pop()
        if self._cell is not None or href is None:
            return
        text = _SPACE.sub(" ", "".join(self._out[start:])).strip()
        url = urljoin(self.base_url, href.strip())
        if not text or url.startswith(("javascript:", "data:")) or href.startswith("#"):
            return
        del self._out[start:]
        self._out.append(f"[{text}]({url})")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._drop_depth:
            return
        if self._pre_depth:
            self._emit(data)
            return
        text = _SPACE.sub(" ", data)
        if not text.strip():
            if self._out and not self._out[-1].endswith((" ", "\n")):
                self._emit(" ")
            return
        last = "".join(self._out[-1:])
        if last.endswith(("\n", " ")) or not last:
            text = text.lstrip()
        self._emit(text)

    def result(self) -> str:
        while self._links:
            self._close_link()
        while self._quotes:
            self.handle_endtag("blockquote")
        text = "".join(self._out)
        lines = [line.rstrip() for line in text.split("\n")]
        collapsed = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
        return collapsed.strip()


def html_to_text(html: str, base_url: str) -> tuple[str, str]:
    """(title, readable text) of an HTML document; links are made absolute against base_url."""
    converter = _Converter(base_url)
    converter.feed(html)
    converter.close()
    return _SPACE.sub(" ", converter.title).strip(), converter.result()
