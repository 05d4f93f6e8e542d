"""A bash script read with a real shell grammar (tree-sitter-bash), for the approval layer.

`parse_script` walks the whole syntax tree: lists, pipelines, subshells, `{ }` groups, the bodies
of `if`/`for`/`while`/`case`, function bodies, and the commands inside command and process
substitutions, `${x:-$(...)}` and unquoted heredocs (all of which bash runs). It yields every
simple command as a list of words with quoting taken out (`\\rm`, `"rm"`, `r''m` and `$'\\x72m'`
all read `rm`), marking words whose value is only known at run time (a variable, a substitution,
a glob or a brace expansion). It reads; it never runs anything.

tree-sitter is imported on the first parse, never at start-up: `xum run` and the other front-ends
pay for it only when a bash call is classified.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import posixpath
import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


@dataclass(frozen=True, slots=True)
class Word:
    text: str  # the value with quoting taken out (the source text where it is not static)
    static: bool = True  # False: a variable, substitution or expansion decides it at run time
    pattern: bool = False  # an unquoted glob (`*`, `?`, `[`) that bash may expand


@dataclass(slots=True)
class SimpleCommand:
    words: list[Word]  # the command name first; assignments and redirections taken out
    stdin_text: str | None = None  # the text of a heredoc or here-string fed to it
    upstream: list[SimpleCommand] = field(default_factory=list)  # earlier pipeline stages
    function: str | None = None  # the function whose body holds it
    forks: bool = False  # a pipeline stage or a background job (`&`)
    assignments: list[Word] = field(default_factory=list)  # `A=1 cmd`: the `A=1` words
    stdin_file: Word | None = None  # `cmd < FILE`


@dataclass(slots=True)
class Script:
    commands: list[SimpleCommand] = field(default_factory=list)
    written: list[Word] = field(default_factory=list)  # where output redirections write
    functions: set[str] = field(default_factory=set)  # names the script defines as functions
    aliases: list[str] = field(default_factory=list)  # alias bodies (`alias ll='ls -l'`)
    # Files the script writes through redirections, with their text when it is fixed
    # (`echo ... > f`, `cat > f <<EOF`); None when only known at run time.
    files: dict[str, str | None] = field(default_factory=dict)
    errors: bool = False  # the grammar could not read all of it (ERROR or MISSING nodes)


@cache
def _parser() -> Parser:
    import tree_sitter

    return tree_sitter.Parser(tree_sitter.Language(_bash_language()))


def _bash_language() -> object:
    """`tree_sitter_bash.language()`. The package's `__init__` imports `importlib.resources`
    (with it tempfile, shutil, bz2, lzma and random: about 9 ms, most of the first bash call's
    parser) only for a highlight query xum never reads, so the grammar's compiled binding is
    loaded by itself; the plain import is the fallback for a layout other than this one."""
    import importlib.machinery
    import importlib.util

    try:
        spec = importlib.util.find_spec("tree_sitter_bash")
        folders = list(spec.submodule_search_locations or ()) if spec is not None else []
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            for folder in folders:
                path = os.path.join(folder, "_binding" + suffix)
                if not os.path.isfile(path):
                    continue
                name = "tree_sitter_bash._binding"
                loader = importlib.machinery.ExtensionFileLoader(name, path)
                found = importlib.util.spec_from_file_location(name, path, loader=loader)
                if found is None:
                    continue
                module = importlib.util.module_from_spec(found)
                loader.exec_module(module)
                return module.language()
    except (ImportError, OSError, AttributeError):
        pass
    import tree_sitter_bash

    return tree_sitter_bash.language()


def warm_parser() -> None:
    """Build the parser now (loading the grammar takes milliseconds): the tool prewarm thread
    calls it, so the first command's risk check does not."""
    with contextlib.suppress(ImportError, OSError, ValueError):  # parse_script says so
        _parser()


def parse_script(script: str) -> Script:
    """Every simple command of `script`, where it writes, and whether it all parsed."""
    try:
        parser = _parser()
    except (ImportError, OSError, ValueError):  # no grammar: nothing can be read
        return Script(errors=True)
    tree = parser.parse(script.encode("utf-8", "surrogatepass"))
    out = Script(errors=tree.root_node.has_error)
    try:
        _Walker(out).statement(tree.root_node, _Context())
    except RecursionError:  # nesting deeper than Python's stack: read as unreadable
        out.errors = True
    return out


@dataclass(frozen=True, slots=True)
class _Context:
    upstream: tuple[SimpleCommand, ...] = ()
    function: str | None = None
    forks: bool = False
    stdin_text: str | None = None


_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_DYNAMIC = frozenset(
    {"simple_expansion", "expansion", "arithmetic_expansion", *_SUBSTITUTIONS}
)  # fmt: skip
_WORDS = frozenset({*_DYNAMIC, "string", "concatenation", "word", "raw_string", "number"})
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_GLOB = re.compile(r"[*?\[]")
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\([\\\"$`\n])")
_UNQUOTED_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


class _Walker:
    def __init__(self, out: Script) -> None:
        self.out = out

    def statement(self, node: Node, ctx: _Context) -> None:
        kind = node.type
        if kind == "command":
            self.command(node, ctx, [])
        elif kind == "redirected_statement":
            self.redirected(node, ctx)
        elif kind == "pipeline":
            self.pipeline(node, ctx)
        elif kind == "function_definition":
            self.function(node, ctx)
        elif kind in ("program", "list", "compound_statement", "subshell", "do_group"):
            self.sequence(node, ctx)
        elif kind == "declaration_command" or kind == "unset_command":
            self.declaration(node, ctx)
        else:  # if/while/for/case bodies, tests, assignments, ERROR nodes: walk all of it
            for child in node.named_children:
                if child.type in _WORDS:
                    self.nested(child, ctx)
                else:
                    self.statement(child, ctx)

    def sequence(self, node: Node, ctx: _Context) -> None:
        children = node.children
        for i, child in enumerate(children):
            if not child.is_named:
                continue
            backgrounded = i + 1 < len(children) and children[i + 1].type == "&"
            self.statement(child, _Context(ctx.upstream, ctx.function, ctx.forks or backgrounded))

    def pipeline(self, node: Node, ctx: _Context) -> None:
        upstream = list(ctx.upstream)
        for child in node.named_children:
            before = len(self.out.commands)
            self.statement(child, _Context(tuple(upstream), ctx.function, True))
            upstream += self.out.commands[before:]

    def function(self, node: Node, ctx: _Context) -> None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        fname = word_of(name).text if name is not None else None
        if fname:
            self.out.functions.add(fname)
        # The body is read whether or not the script calls it: a call can hide anywhere.
        if body is not None:
            self.statement(body, _Context(function=fname))

    def declaration(self, node: Node, ctx: _Context) -> None:
        words = [Word(_text(node.children[0]))] if node.children else []
        for child in node.named_children:
            self.nested(child, ctx)
            words.append(word_of(child))
        self.out.commands.append(SimpleCommand(words, function=ctx.function, forks=ctx.forks))

    def redirected(self, node: Node, ctx: _Context) -> None:
        body = node.child_by_field_name("body")
        extra: list[Word] = []
        later: list[Node] = []
        stdin_text = ctx.stdin_text
        written = len(self.out.written)
        for child in node.named_children:
            if child == body:
                continue
            taken = self.redirect(child, ctx, extra, later)
            stdin_text = taken if taken is not None else stdin_text
        inner = _Context(ctx.upstream, ctx.function, ctx.forks or bool(later), stdin_text)
        before = len(self.out.commands)
        if body is None:
            if extra:
                self.out.commands.append(SimpleCommand(extra, stdin_text, function=ctx.function))
        elif body.type == "command":
            self.command(body, inner, extra)
        else:
            self.statement(body, inner)
        made = self.out.commands[before:]
        source = _input_file(node)
        for command in made if source is not None else []:
            command.stdin_file = command.stdin_file or source
        content = printed_text(made[0]) if len(made) == 1 else None
        for target in self.out.written[written:]:
            if target.static:
                key = posixpath.normpath(target.text)
                appended = self.out.files.get(key, "") if key in self.out.files else ""
                self.out.files[key] = (
                    None if content is None or appended is None else appended + content
                )
        self.continuations(later, made, ctx)

    def continuations(self, later: list[Node], owner: list[SimpleCommand], ctx: _Context) -> None:
        """What the grammar hangs inside a heredoc after its start line: `cat <<EOF | sh` (a
        pipeline fed by the heredoc's command) or `cat <<EOF && rm x`."""
        for node in later:
            if node.type == "pipeline":
                upstream = [*ctx.upstream, *owner]
                for stage in node.named_children:
                    before = len(self.out.commands)
                    self.statement(stage, _Context(tuple(upstream), ctx.function, True))
                    upstream += self.out.commands[before:]
            else:
                self.statement(node, ctx)

    def redirect(
        self, node: Node, ctx: _Context, extra: list[Word], later: list[Node]
    ) -> str | None:
        """Note where a redirection writes; the words that tree-sitter hangs after its target
        (`cmd 2>/dev/null arg`) are the command's arguments. Returns heredoc/here-string text."""
        kind = node.type
        if kind == "heredoc_redirect":
            text = ""
            for child in node.named_children:
                if child.type == "heredoc_body":
                    self.nested(child, ctx)  # unquoted heredocs run their substitutions
                    text = _text(child)
                elif child.type in ("file_redirect", "herestring_redirect"):
                    self.redirect(child, ctx, extra, later)
                elif child.type not in ("heredoc_start", "heredoc_end"):
                    later.append(child)
            return text
        if kind == "herestring_redirect":
            for child in node.named_children:
                self.nested(child, ctx)
                return word_of(child).text
            return None
        if kind != "file_redirect":
            self.statement(node, ctx)
            return None
        operator = next((c.type for c in node.children if not c.is_named), "")
        targets = [c for c in node.named_children if c.type != "file_descriptor"]
        for i, child in enumerate(targets):
            self.nested(child, ctx)
            if i == 0:
                if ">" in operator and child.type != "number":
                    self.out.written.append(word_of(child))
            else:
                extra.append(word_of(child))
        return None

    def command(self, node: Node, ctx: _Context, extra: list[Word]) -> None:
        words: list[Word] = []
        assignments: list[Word] = []
        later: list[Node] = []
        stdin_text = ctx.stdin_text
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                self.nested(child, ctx)
                assignments.append(word_of(child))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                taken = self.redirect(child, ctx, words, later)
                stdin_text = taken if taken is not None else stdin_text
            elif kind == "command_name":
                self.nested(child, ctx)
                words.extend(word_of(c) for c in child.named_children)
            elif kind != "comment":
                self.nested(child, ctx)
                words.append(word_of(child))
        command = SimpleCommand(
            [*words, *extra],
            stdin_text,
            list(ctx.upstream),
            ctx.function,
            ctx.forks,
            assignments,
        )
        command.stdin_file = _input_file(node)
        if command.words or assignments:
            self.out.commands.append(command)
        self.continuations(later, [command], ctx)
        if command.words and command.words[0].text == "alias":
            for word in command.words[1:]:
                _, _, body = word.text.partition("=")
                if body:
                    self.out.aliases.append(body)

    def nested(self, node: Node, ctx: _Context) -> None:
        """Walk the commands that bash runs while it expands a word: `$(...)`, `<(...)`,
        backquotes, also inside strings, `${x:-...}`, arithmetic and unquoted heredocs."""
        if node.type in _SUBSTITUTIONS:
            # Its output is what the outer command sees; its own stdin is not the pipe.
            self.sequence(node, _Context(function=ctx.function))
            return
        for child in node.named_children:
            self.nested(child, ctx)


def _input_file(node: Node) -> Word | None:
    """The file a `< FILE` redirection among `node`'s children reads."""
    for child in node.named_children:
        if child.type != "file_redirect":
            continue
        operator = next((c.type for c in child.children if not c.is_named), "")
        targets = [c for c in child.named_children if c.type != "file_descriptor"]
        if operator == "<" and targets:
            return word_of(targets[0])
    return None


# Words ------------------------------------------------------------------------------------------


def word_of(node: Node) -> Word:
    """The value of one word node with quoting taken out."""
    kind = node.type
    raw = _text(node)
    if kind == "word" or kind == "command_name":
        if kind == "command_name" and node.named_children:
            return concatenate([word_of(c) for c in node.named_children])
        text = _UNQUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), raw)
        unescaped_glob = bool(_GLOB.search(re.sub(r"\\.", "", raw)))
        brace = bool(_BRACE.search(raw))
        return Word(text, static=not brace, pattern=unescaped_glob or brace)
    if kind == "raw_string":
        return Word(raw[1:-1])
    if kind in ("string", "translated_string"):
        parts = [c for c in node.named_children if c.type != "string_content"]
        inner = raw[raw.index('"') + 1 : -1] if '"' in raw else raw
        return Word(_DOUBLE_QUOTED_ESCAPE.sub(r"\1", inner), static=not parts)
    if kind == "ansi_c_string":
        return Word(_ansi_c(raw[2:-1]))
    if kind == "concatenation":
        joined = concatenate([word_of(c) for c in node.named_children])
        if _BRACE.search(raw):  # `{/,x}` arrives in pieces; bash expands it to several words
            return Word(joined.text, static=False, pattern=True)
        return joined
    if kind in ("number", "variable_name", "heredoc_start", "file_descriptor"):
        return Word(raw)
    if kind == "variable_assignment":
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("name")
        head = _text(name) if name is not None else ""
        if value is None:
            return Word(head + "=")
        assigned = word_of(value)
        return Word(f"{head}={assigned.text}", assigned.static, assigned.pattern)
    # Expansions, substitutions and anything this reading does not know: only known when run.
    return Word(raw, static=False)


def concatenate(parts: list[Word]) -> Word:
    return Word(
        "".join(p.text for p in parts),
        static=all(p.static for p in parts),
        pattern=any(p.pattern for p in parts),
    )


def _ansi_c(body: str) -> str:
    r"""`$'...'` quoting: `\x72`, `\162`, `\u0072`, `\n`, `\'` and friends."""
    body = re.sub(r"\\c(.)", lambda m: chr(ord(m.group(1).upper()) ^ 64), body)
    body = body.replace(r"\'", "'").replace(r"\"", '"').replace(r"\?", "?").replace(r"\e", "\x1b")
    body = re.sub(r"\\E", "\x1b", body)
    body = re.sub(r"\\([0-7]{1,3})", lambda m: chr(int(m.group(1), 8) & 0xFF), body)
    try:
        return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


def printed_text(command: SimpleCommand) -> str | None:
    """What `echo`/`printf` with fixed words, or `cat` of a heredoc, prints; else None."""
    words = command.words
    if not words or not all(w.static for w in words):
        return None
    name = posixpath.basename(words[0].text)
    if name == "cat" and len(words) == 1 and command.stdin_text is not None:
        return command.stdin_text
    if name not in ("echo", "printf"):
        return None
    args = [w.text for w in words[1:]]
    while args and re.fullmatch(r"-[neE]+", args[0]):
        args = args[1:]
    return " ".join(args).replace("\\n", "\n") + "\n"
