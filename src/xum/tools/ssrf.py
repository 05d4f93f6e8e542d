"""The SSRF guard for web_fetch: which addresses a fetch may reach.

A prompt-injected model can ask for any URL, so the destination is checked before connecting,
in every mode: loopback, private, link-local (cloud metadata at 169.254.169.254), shared
(CGNAT), multicast, reserved, documentation and other special-purpose ranges are refused, for
IPv4 and IPv6, including IPv6 forms that embed an IPv4 address (IPv4-mapped, IPv4-compatible,
NAT64, 6to4, Teredo). The name is resolved here, every answer is checked, a failed lookup
refuses, and the caller connects to the exact address that passed (no second lookup that a
rebinding DNS server could answer differently).

The user (never the repository) can open specific hosts in `$XUM_ROOT/config.json`:

    {"webFetch": {"allowHosts": ["127.0.0.1:8765", "internal.example", "10.1.0.0/16"]}}

An entry is a host name, an IP address or a CIDR network, optionally with `:port` (`[v6]:port`
for IPv6). A name entry opens that name (whatever it resolves to); an address or network entry
opens those addresses, however they were reached. Without a port, every port is open.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# (host, port) -> the addresses it resolves to, as strings. Raise OSError when it does not.
Resolver = Callable[[str, int], Awaitable[list[str]]]

CONFIG_KEY = "webFetch"
ALLOW_KEY = "allowHosts"


def _nets(*pairs: tuple[str, str]) -> tuple[tuple[IPNetwork, str], ...]:
    return tuple((ipaddress.ip_network(net), label) for net, label in pairs)


DENIED_V4 = _nets(
    ("0.0.0.0/8", "'this network' (unspecified)"),
    ("10.0.0.0/8", "private (RFC 1918)"),
    ("100.64.0.0/10", "shared address space (CGNAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local (cloud metadata lives here)"),
    ("172.16.0.0/12", "private (RFC 1918)"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("192.88.99.0/24", "6to4 relay anycast"),
    ("192.168.0.0/16", "private (RFC 1918)"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
    ("255.255.255.255/32", "broadcast"),
)

DENIED_V6 = _nets(
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::ffff:0:0/96", "an IPv4-mapped address"),
    ("::/96", "an IPv4-compatible address (deprecated)"),
    ("64:ff9b:1::/48", "NAT64 (local use)"),
    ("64:ff9b::/96", "NAT64"),
    ("100::/64", "discard-only"),
    ("2001:db8::/32", "documentation"),
    ("fc00::/7", "unique local (ULA)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local (deprecated)"),
    ("ff00::/8", "multicast"),
)


def deny_reason(address: IPAddress) -> str | None:
    """Why `address` may not be fetched, or None when it is a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            inner = deny_reason(embedded)
            if inner is not None:
                return f"{inner}, embedded in an IPv6 address"
        for net, label in DENIED_V6:
            if address in net:
                return label
    else:
        for net, label in DENIED_V4:
            if address in net:
                return label
    if not address.is_global:
        return "not a public address"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d
        return address.ipv4_mapped
    if address.sixtofour is not None:  # 2002:abcd:...
        return address.sixtofour
    if address.teredo is not None:  # (server, client)
        return address.teredo[1]
    packed = address.packed
    if packed[:12] == bytes(12) and packed[12:] not in (bytes(4), b"\0\0\0\1"):
        return ipaddress.IPv4Address(packed[12:])  # ::a.b.c.d (IPv4-compatible, deprecated)
    return None


@dataclass(frozen=True, slots=True)
class AllowRule:
    host: str | None = None  # a lower-case name
    network: IPNetwork | None = None
    port: int | None = None

    def allows_name(self, host: str, port: int) -> bool:
        return self.host is not None and self.host == host and self.port in (None, port)

    def allows_address(self, address: IPAddress, port: int) -> bool:
        if self.network is None or self.port not in (None, port):
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return address.version == self.network.version and address in self.network


def parse_allow_rules(entries: Iterable[Any]) -> tuple[list[AllowRule], list[str]]:
    """Parse allow entries; returns (rules, problems). A bad entry is skipped, never widened."""
    rules: list[AllowRule] = []
    problems: list[str] = []
    for entry in entries:
        if not isinstance(entry, str) or not entry.strip():
            problems.append(f"{entry!r} is not a host string")
            continue
        try:
            rules.append(_parse_allow_rule(entry.strip()))
        except ValueError as exc:
            problems.append(f"{entry!r}: {exc}")
    return rules, problems


def _parse_allow_rule(entry: str) -> AllowRule:
    host, port = entry, None
    if entry.startswith("["):
        close = entry.find("]")
        if close < 0:
            raise ValueError("unclosed '['")
        host, rest = entry[1:close], entry[close + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise ValueError("expected ':port' after ']'")
            port = _port(rest[1:])
    elif entry.count(":") == 1:
        host, raw_port = entry.split(":")
        port = _port(raw_port)
    try:
        return AllowRule(network=ipaddress.ip_network(host, strict=False), port=port)
    except ValueError:
        pass
    name = host.lower().rstrip(".")
    if not name or any(c in name for c in "/ @?#:[]"):
        raise ValueError("not a host name, address or network")
    return AllowRule(host=name, port=port)


def _port(raw: str) -> int:
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise ValueError(f"bad port {raw!r}")
    return int(raw)


def load_allow_rules() -> tuple[list[AllowRule], list[str]]:
    """The user's allow list from `$XUM_ROOT/config.json` (re-read on every fetch)."""
    from xum.store.config import load_config

    section = load_config().get(CONFIG_KEY)
    if not isinstance(section, dict):
        return [], []
    entries = section.get(ALLOW_KEY)
    if entries is None:
        return [], []
    if not isinstance(entries, list):
        return [], [f"{CONFIG_KEY}.{ALLOW_KEY} must be a list of strings"]
    return parse_allow_rules(entries)


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return [str(info[4][0]) for info in infos]


class Refused(Exception):
    """A destination the guard will not connect to; the message is meant for the model."""


async def check_destination(
    host: str, port: int, *, resolver: Resolver, rules: list[AllowRule]
) -> str:
    """The address to connect to for host:port, after every check; Refused otherwise.

    `host` is the URL's host in ASCII (IDNA) form, without brackets.
    """
    host = host.lower().rstrip(".")
    name_allowed = any(rule.allows_name(host, port) for rule in rules)
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        answers = [literal]
    else:
        try:
            raw = await resolver(host, port)
        except (OSError, UnicodeError) as exc:
            raise Refused(f"could not resolve {host}: {exc}; the fetch was refused") from None
        answers = []
        for text in raw:
            try:
                answers.append(ipaddress.ip_address(text.split("%", 1)[0]))
            except ValueError:
                raise Refused(f"{host} resolved to {text!r}, which is not an address") from None
        if not answers:
            raise Refused(f"{host} did not resolve to any address; the fetch was refused")
    if not name_allowed:
        for address in answers:
            if any(rule.allows_address(address, port) for rule in rules):
                continue
            reason = deny_reason(address)
            if reason is not None:
                via = "" if literal is not None else f" ({host} resolves to it)"
                raise Refused(
                    f"refused: {address}{via} is {reason}; web_fetch only reaches public "
                    "addresses (the user can allow specific hosts in xum's config)."
                )
    return str(answers[0])
