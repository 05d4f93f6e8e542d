"""The HTML reader: structure kept, chrome dropped, links absolute, never fails on bad HTML."""

from __future__ import annotations

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
    assert text.endswith("unclosed **bold *both")
