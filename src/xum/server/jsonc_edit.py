"""Edit a JSONC document in place: change one value and keep every other byte.

The settings page writes API keys, base URLs and model ids into `providers.jsonc`, a file the user also edits
by hand, with comments. Re-serializing the parsed data would lose the comments and the layout, so
this module tokenizes the text (strings, numbers, literals, punctuation, comments, whitespace),
parses the tokens into a tree that remembers each node's character span, and splices only the
span that changes. The dialect is what `xum.core.jsonc` reads (json5): comments, trailing
commas, single-quoted strings and unquoted keys. Arrays of values can gain an item at the end
(`append`) or lose the items equal to a value (`remove_item`) the same way.

Every edit is checked: the edited text is parsed again and must equal the original data with
exactly that change applied, otherwise `JsoncEditError` is raised and nothing is written.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xum.core.errors import XumError
from xum.core.jsonc import parse_jsonc

_DELETE = object()


class JsoncEditError(XumError):
    code = "config_error"


@dataclass
class _Token:
    kind: str  # "{", "}", "[", "]", ":", ",", "string", "scalar", "comment", "ws"
    start: int
    end: int
    value: Any = None  # decoded string for "string"


_SCALAR = re.compile(r"[A-Za-z0-9_$+\-.]+")


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n\ufeff\u00a0\u2028\u2029\v\f":
            j = i + 1
            while j < n and text[j] in " \t\r\n\u00a0\u2028\u2029\v\f":
                j += 1
            tokens.append(_Token("ws", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            tokens.append(_Token("comment", i, j))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise JsoncEditError("unterminated /* comment")
            tokens.append(_Token("comment", i, j + 2))
            i = j + 2
        elif c in "{}[]:,":
            tokens.append(_Token(c, i, i + 1))
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise JsoncEditError("unterminated string")
            raw = text[i : j + 1]
            tokens.append(_Token("string", i, j + 1, parse_jsonc(raw, path="<string>")))
            i = j + 1
        else:
            m = _SCALAR.match(text, i)
            if m is None:
                raise JsoncEditError(f"unexpected character {c!r} at offset {i}")
            tokens.append(_Token("scalar", i, m.end(), m.group()))
            i = m.end()
    return tokens


@dataclass
class _Node:
    start: int
    end: int


@dataclass
class _Member:
    key: str
    key_start: int
    value: _Node
    comma: int | None = None  # offset of the comma after the value


@dataclass
class _Object(_Node):
    members: list[_Member] = field(default_factory=list)


@dataclass
class _Array(_Node):
    # Items as members with an empty key: `key_start` is where the item starts.
    items: list[_Member] = field(default_factory=list)


@dataclass
class _Other(_Node):
    pass


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = [t for t in tokens if t.kind not in ("ws", "comment")]
        self.i = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, kind: str | None = None) -> _Token:
        tok = self.peek()
        if tok is None or (kind is not None and tok.kind != kind):
            raise JsoncEditError(f"unexpected {'end' if tok is None else tok.kind!r} in document")
        self.i += 1
        return tok

    def value(self) -> _Node:
        tok = self.take()
        if tok.kind == "{":
            obj = _Object(tok.start, tok.start)
            while (nxt := self.peek()) is not None and nxt.kind != "}":
                key_tok = self.take()
                if key_tok.kind == "string" or key_tok.kind == "scalar":
                    key = str(key_tok.value)
                else:
                    raise JsoncEditError(f"unexpected {key_tok.kind!r} where a key belongs")
                self.take(":")
                member = _Member(key, key_tok.start, self.value())
                obj.members.append(member)
                after = self.peek()
                if after is not None and after.kind == ",":
                    member.comma = self.take().start
                elif after is None or after.kind != "}":
                    raise JsoncEditError("expected ',' or '}' after an object member")
            obj.end = self.take("}").end
            return obj
        if tok.kind == "[":
            arr = _Array(tok.start, tok.start)
            while (nxt := self.peek()) is not None and nxt.kind != "]":
                item = _Member("", nxt.start, self.value())
                arr.items.append(item)
                after = self.peek()
                if after is not None and after.kind == ",":
                    item.comma = self.take().start
                elif after is None or after.kind != "]":
                    raise JsoncEditError("expected ',' or ']' after an array item")
            arr.end = self.take("]").end
            return arr
        if tok.kind in ("string", "scalar"):
            return _Other(tok.start, tok.end)
        raise JsoncEditError(f"unexpected {tok.kind!r} where a value belongs")


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _indent_of(text: str, pos: int) -> str:
    start = _line_start(text, pos)
    prefix = text[start:pos]
    return prefix if not prefix.strip() else re.match(r"[ \t]*", prefix).group()  # type: ignore[union-attr]


def _trailing_trivia_end(text: str, pos: int) -> int:
    """The end of the line at `pos` when the rest of it is only blanks and a comment, else
    `pos`."""
    eol = text.find("\n", pos)
    eol = len(text) if eol < 0 else eol
    rest = text[pos:eol].strip()
    if not rest or rest.startswith("//"):
        return eol
    if rest.startswith("/*") and rest.endswith("*/") and rest.count("*/") == 1:
        return eol
    return pos


def _dump(value: Any, indent: str, unit: str) -> str:
    if isinstance(value, dict) and value:
        inner = indent + unit
        items = [f"{inner}{json.dumps(k)}: {_dump(v, inner, unit)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    return json.dumps(value, ensure_ascii=False)


def _inline(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _nest(path: Sequence[str], value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


class JsoncDocument:
    """One JSONC text; `set` and `delete` return the edited text (the object is not changed)."""

    def __init__(self, text: str, *, path: str = "<jsonc>") -> None:
        self.text = text
        self.path = path
        self.data = parse_jsonc(text, path=path)  # ConfigError (file:line:col) when unparseable
        tokens = _tokenize(text)
        significant = [t for t in tokens if t.kind not in ("ws", "comment")]
        self.root: _Node | None = None
        if significant:
            parser = _Parser(tokens)
            self.root = parser.value()
            if parser.peek() is not None:
                raise JsoncEditError("content after the top-level value")
        if self.root is not None and not isinstance(self.root, _Object):
            raise JsoncEditError("the top level must be an object", hint=f"fix {path} by hand")

    def _unit(self) -> str:
        root = self.root
        if isinstance(root, _Object) and root.members:
            indent = _indent_of(self.text, root.members[0].key_start)
            if indent:
                return indent
        return "  "

    def set(self, path: Sequence[str], value: Any) -> str:
        if not path:
            raise ValueError("empty path")
        return self._edit(path, value)

    def delete(self, path: Sequence[str]) -> str:
        if not path:
            raise ValueError("empty path")
        return self._edit(path, _DELETE)

    def get(self, path: Sequence[str]) -> Any:
        """The parsed value at `path`, or None when something on the way is missing."""
        node = self.data
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node

    def append(self, path: Sequence[str], value: Any) -> str:
        """Add `value` at the end of the array at `path` (created when missing)."""
        if not path:
            raise ValueError("empty path")
        current = self.get(path)
        if current is None:
            return self._edit(path, [value])
        if not isinstance(current, list):
            raise JsoncEditError(f"{'.'.join(path)} is not a list")
        expected = copy.deepcopy(self.data)
        _target(expected, path).append(copy.deepcopy(value))
        arr = self._array_at(path)
        return self._checked(self._append_item(arr, value), expected)

    def remove_item(self, path: Sequence[str], value: Any) -> str:
        """Remove every item equal to `value` from the array at `path` (no change when there is
        none); the array itself stays, empty or not."""
        if not path:
            raise ValueError("empty path")
        current = self.get(path)
        if not isinstance(current, list) or value not in current:
            return self.text
        expected = copy.deepcopy(self.data)
        target = _target(expected, path)
        target[:] = [item for item in target if item != value]
        arr = self._array_at(path)
        matches = [item for item, data in zip(arr.items, current, strict=True) if data == value]
        return self._checked(self._remove(arr.items, matches), expected)

    # --------------------------------------------------------------------------------------

    def _edit(self, path: Sequence[str], value: Any) -> str:
        expected = copy.deepcopy(self.data) if self.data is not None else {}
        if not _apply(expected, path, value):
            return self.text  # deleting something that is not there
        if self.root is None:
            body = _dump(_nest(path, value), "", "  ")
            sep = "" if not self.text or self.text.endswith("\n") else "\n"
            new_text = f"{self.text}{sep}{body}\n"
        else:
            assert isinstance(self.root, _Object)
            new_text = self._splice(self.root, list(path), value)
        return self._checked(new_text, expected)

    def _checked(self, new_text: str, expected: Any) -> str:
        try:
            again = parse_jsonc(new_text, path=self.path)
        except XumError as exc:  # pragma: no cover - a bug in the splicer
            raise JsoncEditError(f"editing {self.path} would break it: {exc.message}") from None
        if again != expected:  # pragma: no cover - a bug in the splicer
            raise JsoncEditError(f"editing {self.path} in place failed; the file was not changed")
        return new_text

    def _array_at(self, path: Sequence[str]) -> _Array:
        node: _Node | None = self.root
        for key in path:
            if not isinstance(node, _Object):
                raise JsoncEditError(f"{'.'.join(path)} cannot be edited in place")
            matches = [m for m in node.members if m.key == key]
            if not matches:
                raise JsoncEditError(f"{'.'.join(path)} cannot be edited in place")
            node = matches[-1].value  # duplicate keys: the last one wins, as when reading
        if not isinstance(node, _Array):
            raise JsoncEditError(f"{'.'.join(path)} is not a list")
        return node

    def _append_item(self, arr: _Array, value: Any) -> str:
        text = self.text
        dumped = _inline(value)
        if arr.items:
            last = arr.items[-1]
            multiline = "\n" in text[arr.start : last.key_start]
            indent = _indent_of(text, last.key_start)
            lead = f"\n{indent}" if multiline else " "
            after = last.comma + 1 if last.comma is not None else last.value.end
            eol = _trailing_trivia_end(text, after) if multiline else after
            if last.comma is not None:
                return text[:eol] + lead + dumped + "," + text[eol:]
            return text[:after] + "," + text[after:eol] + lead + dumped + text[eol:]
        close = arr.end - 1
        inside = text[arr.start + 1 : close]
        if not inside.strip():
            return text[: arr.start + 1] + dumped + text[close:]
        if "\n" not in inside:  # `[ /* none */ ]`: the item goes right before the bracket
            return text[:close] + dumped + text[close:]
        # Only comments inside: keep them and put the item on its own line before the bracket.
        close_indent = _indent_of(text, close)
        line_start = _line_start(text, close)
        if not text[line_start:close].strip():
            indent = close_indent + self._unit()
            return text[:line_start] + f"{indent}{dumped}\n" + text[line_start:]
        return text[:close] + f"\n{close_indent}{dumped}\n{close_indent}" + text[close:]

    def _splice(self, obj: _Object, path: list[str], value: Any) -> str:
        key, rest = path[0], path[1:]
        matches = [m for m in obj.members if m.key == key]
        if not matches:
            assert value is not _DELETE
            return self._insert(obj, key, _nest(rest, value))
        if value is _DELETE and not rest:
            return self._remove(obj.members, matches)
        member = matches[-1]  # duplicate keys: the last one wins, as when reading
        if rest and isinstance(member.value, _Object):
            return self._splice(member.value, rest, value)
        new_value = _nest(rest, value)
        indent = _indent_of(self.text, member.key_start)
        replacement = _dump(new_value, indent, self._unit())
        return self.text[: member.value.start] + replacement + self.text[member.value.end :]

    def _insert(self, obj: _Object, key: str, value: Any) -> str:
        text, unit = self.text, self._unit()
        if obj.members:
            last = obj.members[-1]
            indent = _indent_of(text, last.key_start)
            multiline = "\n" in text[obj.start : last.key_start]
            dumped = _dump(value, indent, unit) if multiline else _inline(value)
            entry = f"{json.dumps(key)}: {dumped}"
            after = last.comma + 1 if last.comma is not None else last.value.end
            # A comment after the last member on its line stays with that member.
            eol = _trailing_trivia_end(text, after) if multiline else after
            if last.comma is not None:
                # Keep the user's trailing-comma style: the new member gets one too.
                lead = f"\n{indent}" if multiline else " "
                return text[:eol] + lead + entry + "," + text[eol:]
            lead = f"\n{indent}" if multiline else " "
            return text[:after] + "," + text[after:eol] + lead + entry + text[eol:]
        close_indent = _indent_of(text, obj.end - 1)
        indent = close_indent + unit
        entry = f"{json.dumps(key)}: {_dump(value, indent, unit)}"
        inside = text[obj.start + 1 : obj.end - 1]
        if inside.strip():  # only comments inside: keep them, add after
            return text[: obj.end - 1] + f"{indent}{entry}\n{close_indent}" + text[obj.end - 1 :]
        return text[: obj.start + 1] + f"\n{indent}{entry}\n{close_indent}" + text[obj.end - 1 :]

    def _remove(self, members: list[_Member], matches: list[_Member]) -> str:
        """Take `matches` (object members, or array items) out of the text."""
        text = self.text
        # Remove from the last occurrence backwards: the offsets of earlier members stay valid.
        for member in sorted(matches, key=lambda m: m.key_start, reverse=True):
            idx = members.index(member)
            prev = members[idx - 1] if idx > 0 else None
            # The removed member was the last one: the comma before it goes too (unless that
            # comma's member is being removed as well).
            drop_prev_comma = (
                member.comma is None
                and prev is not None
                and prev.comma is not None
                and prev not in matches
            )
            start = member.key_start
            end = member.comma + 1 if member.comma is not None else member.value.end
            line_start = _line_start(text, start)
            if not text[line_start:start].strip():
                start = line_start  # the member has its own line: the line goes
                eol = text.find("\n", end)
                eol = len(text) if eol < 0 else eol
                tail = text[end:eol]
                if not tail.strip() or tail.strip().startswith("//"):
                    end = eol + 1 if eol < len(text) else eol
                text = text[:start] + text[end:]
                if drop_prev_comma:
                    assert prev is not None and prev.comma is not None
                    text = text[: prev.comma] + text[prev.comma + 1 :]
            elif drop_prev_comma:
                assert prev is not None and prev.comma is not None
                text = text[: prev.comma] + text[end:]  # `, "key": value`
            elif prev is not None:
                while start > 0 and text[start - 1] in " \t":
                    start -= 1  # ` "key": value,` from after the previous comma
                text = text[:start] + text[end:]
            else:
                while end < len(text) and text[end] in " \t":
                    end += 1  # `"key": value, ` up to the next member
                text = text[:start] + text[end:]
        return text


def _target(data: Any, path: Sequence[str]) -> Any:
    node = data
    for key in path:
        node = node[key]
    return node


def _apply(data: Any, path: Sequence[str], value: Any) -> bool:
    """Apply the change to plain data; False when a delete finds nothing to delete."""
    node = data
    for key in path[:-1]:
        nxt = node.get(key) if isinstance(node, dict) else None
        if not isinstance(nxt, dict):
            if value is _DELETE:
                return False
            nxt = {}
            node[key] = nxt
        node = nxt
    if value is _DELETE:
        if path[-1] not in node:
            return False
        del node[path[-1]]
        return True
    node[path[-1]] = value
    return True
