"""web_fetch against a real HTTP server on 127.0.0.1, through the real SSRF guard.

Loopback is denied by default, so each test opens its own server in `$XUM_ROOT/config.json`
(`webFetch.allowHosts`), exactly as a user would. The injectable resolver stands in for DNS
("a name that resolves to a private address").
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.certs import make_certs
from tests.support.tools import make_ctx
from tests.support.web_fetch import (
    Handler,
    allow,
)
from xum.tools.web_fetch import MAX_BODY_BYTES, WebFetchInput, WebFetchTool


def resolver(table: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    calls: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


async def fetch(tmp_path: Path, url: str, table: dict[str, list[str]] | None = None):  # type: ignore[no-untyped-def]
    tool = WebFetchTool(resolver=resolver(table or {}))
    return await tool.run(WebFetchInput(url=url), make_ctx(tmp_path))


async def test_loopback_is_refused_without_an_allow_entry(tmp_path: Path, web_server: Any) -> None:
    port, seen = web_server
    result = await fetch(tmp_path, f"http://127.0.0.1:{port}/page")
    assert result.is_error and result.meta["refused"] is True
    assert "loopback" in result.output
    assert seen == []  # nothing reached the server


async def test_allow_listed_loopback_works_and_html_is_converted(
    tmp_path: Path, web_server: Any
) -> None:
    port, seen = web_server
    allow(f"127.0.0.1:{port}")
    result = await fetch(tmp_path, f"http://127.0.0.1:{port}/page")
    assert not result.is_error, result.output
    text = result.output
    assert text.startswith(f"URL: http://127.0.0.1:{port}/page\nStatus: 200 OK\n")
    assert "Title: Test Page" in text
    assert "# Welcome" in text
    assert f"Read [the intro](http://127.0.0.1:{port}/docs/intro) first." in text
    assert "- alpha\n- beta" in text
    assert "```\ncode  block\n  indented\n```" in text
    for noise in ("secret", "color: red", "About"):
        assert noise not in text
    assert seen == [{"path": "/page", "host": f"127.0.0.1:{port}"}]


async def test_connects_to_the_checked_address_with_the_name_in_host(
    tmp_path: Path, web_server: Any
) -> None:
    port, _ = web_server
    allow(f"site.test:{port}")
    tool = WebFetchTool(resolver=resolver({"site.test": ["127.0.0.1"]}))
    result = await tool.run(WebFetchInput(url=f"http://site.test:{port}/host"), make_ctx(tmp_path))
    assert result.output.endswith(f"\n\nsite.test:{port}")
    assert tool.resolver.calls == ["site.test"]  # type: ignore[attr-defined]  # one lookup only


async def test_redirects_are_followed_and_each_hop_is_checked(
    tmp_path: Path, web_server: Any
) -> None:
    port, seen = web_server
    allow(f"site.test:{port}")
    table = {"site.test": ["127.0.0.1"], "localhost": ["127.0.0.1"]}
    ok = await fetch(tmp_path, f"http://site.test:{port}/to-page", table)
    assert not ok.is_error
    assert ok.output.startswith(f"URL: http://site.test:{port}/page\nRedirected from: ")
    to_loopback = await fetch(tmp_path, f"http://site.test:{port}/to-loopback-name", table)
    assert to_loopback.is_error and "loopback" in to_loopback.output
    assert "localhost resolves to it" in to_loopback.output
    to_metadata = await fetch(tmp_path, f"http://site.test:{port}/to-metadata", table)
    assert to_metadata.is_error and "169.254.169.254" in to_metadata.output
    assert [s["path"] for s in seen] == ["/to-page", "/page", "/to-loopback-name", "/to-metadata"]
    loop = await fetch(tmp_path, f"http://site.test:{port}/loop", table)
    assert loop.is_error and "more than 5 redirects" in loop.output


async def test_name_resolving_to_a_private_address_is_refused(tmp_path: Path) -> None:
    result = await fetch(tmp_path, "https://intranet.test/", {"intranet.test": ["192.168.1.20"]})
    assert (
        result.is_error
        and "192.168.1.20 (intranet.test resolves to it) is private" in result.output
    )


async def test_dns_failure_is_refused(tmp_path: Path) -> None:
    result = await fetch(tmp_path, "https://does-not-exist.test/")
    assert result.is_error and "could not resolve does-not-exist.test" in result.output


async def test_non_http_schemes_and_credentials_are_refused(tmp_path: Path) -> None:
    for url in ("file:///etc/passwd", "ftp://example.com/", "gopher://x/"):
        result = await fetch(tmp_path, url)
        assert result.is_error and "only http and https" in result.output
    creds = await fetch(tmp_path, "https://user:pw@example.com/")
    assert creds.is_error and "user name or password" in creds.output


async def test_text_json_binary_404_and_size_cap(tmp_path: Path, web_server: Any) -> None:
    port, _ = web_server
    allow(f"127.0.0.1:{port}")
    base = f"http://127.0.0.1:{port}"
    json = await fetch(tmp_path, f"{base}/json")
    assert json.output.endswith('\n\n{"ok": true}')
    png = await fetch(tmp_path, f"{base}/png")
    assert png.is_error and "image/png" in png.output and "not text" in png.output
    missing = await fetch(tmp_path, f"{base}/missing")
    assert missing.is_error and "Status: 404" in missing.output and "no such page" in missing.output
    big = await fetch(tmp_path, f"{base}/big")
    assert not big.is_error
    assert big.meta["body_truncated"] is True and big.meta["bytes"] == MAX_BODY_BYTES
    assert len(big.output) < 60 * 1024
    assert "bytes omitted; full output: " in big.output
    assert big.output.endswith("[the response was cut at 5 MB]")
    spilled = Path(big.meta["spill_path"]).read_text().split("\n\n", 1)[1]
    assert spilled == "x" * MAX_BODY_BYTES + "\n[the response was cut at 5 MB]"


# -- TLS: the connection goes to the checked IP, the certificate is verified against the name --


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, Path, list[str]]]:
    import shutil
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl CLI to make test certificates")
    certs = tmp_path / "certs"
    certs.mkdir()
    ca, cert, key = make_certs(certs)
    sni_seen: list[str] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: sni_seen.append(str(name)) and None  # type: ignore[func-returns-value]
    handler = type("TlsHandler", (Handler,), {"seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1], ca, sni_seen
    finally:
        httpd.shutdown()
        httpd.server_close()


async def test_https_verifies_the_name_while_connecting_to_the_checked_ip(
    tmp_path: Path, tls_server: Any
) -> None:
    import ssl

    port, ca, sni_seen = tls_server
    allow(f"site.test:{port}", f"wrong.test:{port}")
    trust = ssl.create_default_context(cafile=str(ca))
    table = {"site.test": ["127.0.0.1"], "wrong.test": ["127.0.0.1"]}
    tool = WebFetchTool(resolver=resolver(table), verify=trust)
    ok = await tool.run(WebFetchInput(url=f"https://site.test:{port}/host"), make_ctx(tmp_path))
    assert not ok.is_error, ok.output
    assert ok.output.endswith(f"\n\nsite.test:{port}")
    assert sni_seen == ["site.test"]
    # Same server, another name: the certificate does not match it, so the fetch fails.
    wrong = await tool.run(WebFetchInput(url=f"https://wrong.test:{port}/host"), make_ctx(tmp_path))
    assert wrong.is_error and "failed" in wrong.output
    # With the default roots the throwaway CA is not trusted.
    default = WebFetchTool(resolver=resolver(table))
    untrusted = await default.run(
        WebFetchInput(url=f"https://site.test:{port}/host"), make_ctx(tmp_path)
    )
    assert untrusted.is_error and "CERTIFICATE_VERIFY_FAILED" in untrusted.output
