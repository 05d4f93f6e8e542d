"""The SSRF guard, table-driven: every denied range, IPv6 and embedded-IPv4 forms, allow rules."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from xum.tools.ssrf import (
    AllowRule,
    Refused,
    check_destination,
    deny_reason,
    parse_allow_rules,
)

DENIED = [
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "10.255.255.255",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "169.254.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.0.2.1",
    "192.88.99.1",
    "192.168.0.1",
    "192.168.255.255",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fc00::1",
    "fd12:3456:789a::1",
    "fe80::1",
    "febf::1",
    "fec0::1",
    "ff02::1",
    "ff05::1:3",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::808:808",
    "64:ff9b:1::1",
    "100::1",
    "2001:db8::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:8.8.8.8",
    "::127.0.0.1",
    "::10.1.2.3",
    "2002:7f00:1::1",
    "2002:c0a8:101::1",  # 6to4 wrapping 127.0.0.1 / 192.168.1.1
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
]
ALLOWED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.1",
    "172.32.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
]


@pytest.mark.parametrize("address", DENIED)
def test_denied_addresses(address: str) -> None:
    assert deny_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_pass(address: str) -> None:
    assert deny_reason(ipaddress.ip_address(address)) is None


def test_embedded_forms_name_the_inner_reason() -> None:
    reason = deny_reason(ipaddress.ip_address("::ffff:169.254.169.254"))
    assert reason is not None and "link-local" in reason and "IPv6" in reason


def resolver_for(table: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    calls: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


async def test_every_answer_is_checked() -> None:
    resolve = resolver_for({"mixed.test": ["93.184.216.34", "10.0.0.5"], "ok.test": ["8.8.8.8"]})
    with pytest.raises(Refused, match=r"10\.0\.0\.5 \(mixed\.test resolves to it\) is private"):
        await check_destination("mixed.test", 443, resolver=resolve, rules=[])
    assert await check_destination("OK.test.", 443, resolver=resolve, rules=[]) == "8.8.8.8"


async def test_lookup_failure_refuses() -> None:
    with pytest.raises(Refused, match=r"could not resolve nowhere\.test"):
        await check_destination("nowhere.test", 80, resolver=resolver_for({}), rules=[])
    with pytest.raises(Refused, match="did not resolve to any address"):
        await check_destination(
            "empty.test", 80, resolver=resolver_for({"empty.test": []}), rules=[]
        )


async def test_name_resolving_to_metadata_is_refused() -> None:
    resolve = resolver_for({"metadata.test": ["169.254.169.254"]})
    with pytest.raises(Refused, match="link-local"):
        await check_destination("metadata.test", 80, resolver=resolve, rules=[])


async def test_numeric_host_forms_are_resolved_and_checked() -> None:
    # getaddrinfo understands 2130706433 and 0x7f.1 as 127.0.0.1; the guard checks the answer.
    resolve = resolver_for({"2130706433": ["127.0.0.1"], "0x7f.1": ["127.0.0.1"]})
    for host in ("2130706433", "0x7f.1"):
        with pytest.raises(Refused, match="loopback"):
            await check_destination(host, 80, resolver=resolve, rules=[])
    with pytest.raises(Refused, match="loopback"):
        await check_destination("::1", 80, resolver=resolve, rules=[])
    assert resolve.calls == ["2130706433", "0x7f.1"]  # literals are not looked up


def test_allow_rule_parsing() -> None:
    rules, problems = parse_allow_rules(
        [
            "127.0.0.1:8765",
            "Internal.Example",
            "10.1.0.0/16",
            "[::1]:9000",
            "api.test:443",
            "bad:port:x",
            "",
            5,
            "a/b",
        ]
    )
    assert rules == [
        AllowRule(network=ipaddress.ip_network("127.0.0.1/32"), port=8765),
        AllowRule(host="internal.example"),
        AllowRule(network=ipaddress.ip_network("10.1.0.0/16")),
        AllowRule(network=ipaddress.ip_network("::1/128"), port=9000),
        AllowRule(host="api.test", port=443),
    ]
    assert len(problems) == 4


async def test_allow_rules_open_exactly_what_they_name() -> None:
    rules, _ = parse_allow_rules(["127.0.0.1:8765", "internal.example", "10.1.0.0/16"])
    resolve = resolver_for(
        {"internal.example": ["192.168.1.10"], "db.test": ["10.1.2.3"], "other.test": ["10.2.0.1"]}
    )
    assert await check_destination("127.0.0.1", 8765, resolver=resolve, rules=rules) == "127.0.0.1"
    with pytest.raises(Refused):
        await check_destination("127.0.0.1", 8766, resolver=resolve, rules=rules)
    assert (
        await check_destination("internal.example", 443, resolver=resolve, rules=rules)
        == "192.168.1.10"
    )
    assert await check_destination("db.test", 5432, resolver=resolve, rules=rules) == "10.1.2.3"
    with pytest.raises(Refused):
        await check_destination("other.test", 80, resolver=resolve, rules=rules)
