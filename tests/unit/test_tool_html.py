"""The HTML reader: structure kept, chrome dropped, links absolute, never fails on bad HTML;
checked on hand-written copies of a documentation page, a GitHub README and a blog post."""

from __future__ import annotations

from pathlib import Path

from xum.tools.html_text import html_to_text


def test_structure_and_links() -> None:
    title, text = html_to_text(
        "<title> A &amp; B </title><h2>Intro</h2><p>See <a href='../x?y=1#z'>this <b>page</b></a>"
        " and <a href='#top'>top</a>.</p><ol><li>first</li><li>second</li></ol>"
        "<blockquote><p>wise words</p></blockquote><hr><p>Q&amp;A &lt;tags&gt;</p>",
        "https://example.com/docs/a/",
    )
    assert title == "A & B"
    assert text == (
        "## Intro\n\nSee [this **page**](https://example.com/docs/x?y=1#z) and top.\n\n"
        "1. first\n2. second\n\n> wise words\n\n---\n\nQ&A <tags>"
    )


def test_noise_is_dropped_and_pre_is_kept_verbatim() -> None:
    _, text = html_to_text(
        "<nav>menu</nav><script>evil()</script><style>p{}</style><main><pre>  a\n    b</pre>"
        "<p>x <code>y()</code> z</p></main><footer>legal</footer>",
        "https://e.com/",
    )
    assert text == "```\n  a\n    b\n```\n\nx `y()` z"


def test_tables_and_broken_html_degrade_gracefully() -> None:
    _, text = html_to_text(
        "<table><tr><th>k</th><th>v</th></tr><tr><td>a|b</td><td>1</td></tr></table>"
        "<p>unclosed <b>bold <i>both",
        "https://e.com/",
    )
    assert text.startswith("| k | v |\n| --- | --- |\n| a\\|b | 1 |")
    assert text.endswith("unclosed **bold *both***")  # closed where the document ends


# Real-page shapes (hand-written copies under tests/fixtures/html/) ------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "html"


def fixture(name: str, url: str) -> tuple[str, str]:
    return html_to_text((FIXTURES / f"{name}.html").read_text(encoding="utf-8"), url)


def test_a_sphinx_page_reads_as_its_content() -> None:
    base = "https://tidepool.readthedocs.io/en/2.4/guide/configuration.html"
    title, text = fixture("docs_page", base)
    assert title == "Configuration — tidepool 2.4 documentation"
    assert text.startswith("# Configuration\n")  # the navigation bar and sidebar are gone
    assert "Quick search" not in text and "¶" not in text and "genindex" not in text
    # The table is one table: header, separator, rows, with the link inside a cell kept.
    assert (
        "| Key | Type | Default | Meaning |\n| --- | --- | --- | --- |\n| `max_size` | int |"
    ) in text
    errors = "https://tidepool.readthedocs.io/en/2.4/guide/errors.html#error-kinds"
    assert f"[Error kinds]({errors})" in text
    assert '```toml\n[pool]\nmax_size = 32\nretry_on = ["timeout", "reset"]\n```' in text
    assert "```pycon\n    >>> settings = load_settings(env=False)" in text  # inside its dd
    assert "tidepool.load_settings(" in text and "load\\_settings" not in text  # not escaped
    assert "- **path** – The file to read" in text


def test_a_github_readme_keeps_code_tasks_and_tables_and_drops_the_site() -> None:
    title, text = fixture("github_readme", "https://github.com/quarrylabs/pebble")
    assert title.startswith("GitHub - quarrylabs/pebble")
    for chrome in ("Pricing", "Sign in", "Terms", "Privacy", "data:image", "octicon", "Copied!"):
        assert chrome not in text
    assert "[[image: CI]](https://github.com/quarrylabs/pebble/actions/workflows/ci.yml)" in text
    assert "```shell\ncargo add pebble-kv\npip install pebble-kv\n```" in text
    assert '```python\nimport pebble\n\nwith pebble.open("data.pbl") as db:' in text
    assert "- [x] Atomic batches (`db.batch()`)\n- [x] Prefix scans\n  - [x] forward\n" in text
    assert "  - [ ] reverse\n- [ ] Compression" in text
    assert "| Operation | pebble | sqlite |\n| --- | --- | --- |\n| random read |" in text
    assert "(https://github.com/quarrylabs/pebble/blob/main/docs/FORMAT.md)" in text
    assert "`user_42__profile`" in text


def test_a_blog_post_keeps_the_article_and_its_code() -> None:
    title, text = fixture("blog_post", "https://fieldnotes.example/2026/03/retry-storms/")
    assert title == "Why our retry loop made outages worse | Field Notes"
    for chrome in ("Archive", "RSS", "gtag", "Tags:", "Privacy", "Post"):
        assert chrome not in text
    assert "```python\ndef call_with_retry(fn, attempts=5):\n" in text
    assert '            time.sleep(0.1 * 2 ** attempt)  # "exponential" backoff\n' in text
    assert "```diff\n-            time.sleep" in text
    assert "1. Sleep a *random* time" in text and "3. Count retries" in text
    assert "> Retries without jitter" in text
    assert "[image: Request rate during the outage" in text
    assert "| No jitter | 48,000 | 40 min |" in text


def test_pathological_nesting_degrades_to_plain_text() -> None:
    deep = "<div>" * 5000 + "<p>deep <b>text</b></p>" + "</div>" * 5000
    _, text = html_to_text(deep, "https://e.com/")
    assert "deep" in text and "text" in text
