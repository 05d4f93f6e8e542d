"""Tool-input flattening for hooks, and secret masking (whole texts and live streams)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tools import Streams
from xum.workspaces.flatten import MAX_ARRAY_ITEMS, MAX_VALUE_BYTES, MAX_VARS, env_name, flatten
from xum.workspaces.safety.masking import SecretMasker

P = "XUM_TOOL_INPUT"


def test_field_names_become_upper_snake() -> None:
    assert env_name("reportMarkdown") == "REPORT_MARKDOWN"
    assert env_name("display_name") == "DISPLAY_NAME"
    assert env_name("x_axis") == "X_AXIS"
    assert env_name("includeUnadvertised") == "INCLUDE_UNADVERTISED"
    assert env_name("HTTPServer") == "HTTP_SERVER"
    assert env_name("what color?") == "WHAT_COLOR"


def test_scalars_objects_arrays_and_maps() -> None:
    doc = {
        "script": "ls -la",
        "timeout_secs": 1.5,
        "count": 3,
        "run_in_background": False,
        "nothing": None,
        "monitor": {"filter": "ERR", "cooldownMs": 1000},
        "todos": [{"content": "a", "status": "pending"}, {"content": "b", "status": "done"}],
        "answers": {"Which db?": "postgres"},
    }
    env = flatten(doc, P)
    assert env[f"{P}_SCRIPT"] == "ls -la"
    assert env[f"{P}_TIMEOUT_SECS"] == "1.5"
    assert env[f"{P}_COUNT"] == "3"
    assert env[f"{P}_RUN_IN_BACKGROUND"] == "false"
    assert f"{P}_NOTHING" not in env
    assert env[f"{P}_MONITOR_FILTER"] == "ERR"
    assert env[f"{P}_MONITOR_COOLDOWN_MS"] == "1000"
    assert env[f"{P}_TODOS_COUNT"] == "2"
    assert env[f"{P}_TODOS_1_STATUS"] == "done"
    assert env[f"{P}_ANSWERS_WHICH_DB"] == "postgres"


def test_path_field_is_file_path_because_input_path_names_the_file() -> None:
    env = flatten({"path": "src/app.py", "old_string": "a"}, P)
    assert env[f"{P}_FILE_PATH"] == "src/app.py"
    assert f"{P}_PATH" not in env
    # a real file_path field wins over the renamed one
    env = flatten({"path": "p", "filePath": "real"}, P)
    assert env[f"{P}_FILE_PATH"] == "real"
    # nested `path` fields keep their name
    assert flatten({"hunks": [{"path": "x"}]}, P)[f"{P}_HUNKS_0_PATH"] == "x"


def test_limits() -> None:
    env = flatten({"big": "x" * (MAX_VALUE_BYTES + 1), "ok": "x" * MAX_VALUE_BYTES}, P)
    assert f"{P}_BIG" not in env and f"{P}_OK" in env
    env = flatten({"items": list(range(MAX_ARRAY_ITEMS + 50))}, P)
    assert env[f"{P}_ITEMS_COUNT"] == str(MAX_ARRAY_ITEMS + 50)
    assert f"{P}_ITEMS_{MAX_ARRAY_ITEMS - 1}" in env and f"{P}_ITEMS_{MAX_ARRAY_ITEMS}" not in env
    env = flatten({f"k{i}": "v" for i in range(MAX_VARS * 2)}, P)
    assert len(env) == MAX_VARS
    assert flatten("not an object", P) == {}
    assert flatten({"nul": "a\0b"}, P) == {}


def test_masking_whole_texts() -> None:
    masker = SecretMasker({"TOKEN": "ghp_abcdef123", "SHORT": "12345", "OTHER": "abcdef1"})
    text = "token=ghp_abcdef123 id=12345 other=abcdef1"
    assert masker.mask(text) == "token=[secret:TOKEN] id=12345 other=[secret:OTHER]"
    assert masker.mask_value({"a": ["ghp_abcdef123", 1]}) == {"a": ["[secret:TOKEN]", 1]}
    assert not SecretMasker({"A": "short"}).active


def test_longer_secret_that_contains_a_shorter_one_is_masked_whole() -> None:
    masker = SecretMasker({"INNER": "secret1", "OUTER": "xx-secret1-yy"})
    assert masker.mask("xx-secret1-yy and secret1") == "[secret:OUTER] and [secret:INNER]"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=30))
def test_stream_masking_never_leaks_across_chunk_boundaries(cuts: list[int]) -> None:
    secret = "s3cr3t-VALUE-42"
    masker = SecretMasker({"API_KEY": secret})
    data = f"start {secret} middle {secret}{secret} end s3cr3t-partial".encode()
    streams = Streams()
    stream = masker.opener(streams)("output")
    pos = 0
    for cut in cuts * 20:
        if pos >= len(data):
            break
        stream.write(data[pos : pos + cut])
        pos += cut
    stream.write(data[pos:])
    (inner,) = streams.opened
    assert not inner.closed
    stream.close()
    assert inner.closed
    joined = bytes(inner.data)
    assert secret.encode() not in joined
    assert joined == masker.mask_bytes(data)
