"""The bash grammar is loaded from its compiled binding alone: the `tree_sitter_bash` package's
`__init__` imports `importlib.resources` (and through it tempfile, shutil, bz2, lzma, random)
for a highlight query the risk parser never reads, and that was most of the first bash call's
parser cost. The grammar must be the very same one."""

from __future__ import annotations

import json
import subprocess
import sys

import tree_sitter
import tree_sitter_bash

from xum.tools.shell_parse import _bash_language, parse_script

PROBE = """
import json, sys
from xum.tools.shell_parse import parse_script
script = parse_script("echo hi > out.txt && ls")
print(json.dumps({
    "errors": script.errors,
    "files": script.files,
    "loaded": [m for m in ("tree_sitter_bash", "importlib.resources", "tempfile", "shutil")
               if m in sys.modules],
}))
"""


def test_the_grammar_loads_without_the_packages_init() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["errors"] is False
    assert seen["files"] == {"out.txt": "hi\n"}
    assert seen["loaded"] == []


def test_it_is_the_same_grammar_as_the_packages() -> None:
    ours = tree_sitter.Language(_bash_language())
    theirs = tree_sitter.Language(tree_sitter_bash.language())
    assert ours == theirs
    assert parse_script("cat > f <<EOF\nx\nEOF\n").files == {"f": "x\n"}
