"""Safe fetching: a crawl reaches public addresses only, unless the operator allows more.

A URL names a host; what a request reaches is the address that name resolves to when the
connection is made. A page, a redirect or a DNS record that leads to 127.0.0.1, 10.x, ::1 or
169.254.169.254 (a cloud's metadata service) would make the ingesting machine fetch from its
own network and store the reply as evidence (server-side request forgery). So every TCP
connection of a crawl is made by `GuardedBackend`: it resolves the name itself, refuses when
any address is not public, and connects to the very address it checked, never resolving
again, so a DNS answer that changes between the check and the connection (rebinding) cannot
slip through. A redirect opens its own connection, which passes the same check. The setting
`fetch_allow_private` lifts the rule (an intranet help centre; the tests' loopback server).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

import httpcore
import httpx

ALLOW_HINT = ("set fetch_allow_private (CITADEL_FETCH_ALLOW_PRIVATE=1) to fetch from private "
              "networks")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class Refused(Exception):
    """A fetch the address rules refuse; the message says which address and why."""


def address_problem(ip: str) -> str | None:
    """Why an address may not be fetched from ("a loopback address", …), or None when it is
    public. An IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, 6to4, NAT64)
    is judged by that one first."""
    addr = ipaddress.ip_address(ip.split("%", 1)[0])  # without an IPv6 zone (`fe80::1%eth0`)
    for candidate in reversed(_embedded(addr)):
        if candidate.is_loopback:
            return "a loopback address"
        if candidate.is_link_local:
            return "a link-local address"
        if candidate.is_private:
            return "a private address"
        if not candidate.is_global or candidate.is_multicast:
            return "not a public address"
    return None


def _embedded(addr: ipaddress.IPv4Address | ipaddress.IPv6Address
              ) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [addr]
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            found.append(addr.ipv4_mapped)
        if addr.sixtofour is not None:
            found.append(addr.sixtofour)
        if addr in _NAT64:
            found.append(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
    return found


def resolve(host: str, port: int, allow_private: bool) -> list[str]:
    """The addresses to connect to for `host`, each checked (`Refused` when one is not
    public, unless `allow_private`)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not allow_private:
        for ip in addresses:
            problem = address_problem(ip)
            if problem is not None:
                said = f"{ip} is" if ip == host.strip("[]") else f"{host} resolves to {ip},"
                raise Refused(f"{said} {problem}: refused ({ALLOW_HINT})")
    return addresses


class GuardedBackend(httpcore.SyncBackend):
    """Opens TCP connections only to addresses `resolve` checked (module docstring)."""

    def __init__(self, allow_private: bool) -> None:
        super().__init__()
        self.allow_private = allow_private

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[tuple] | None = None) -> httpcore.NetworkStream:
        failure: httpcore.ConnectError | None = None
        for ip in resolve(host, port, self.allow_private):
            try:
                # The checked address itself: nothing resolves the name again.
                return super().connect_tcp(ip, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as exc:
                failure = exc
        raise failure or httpcore.ConnectError(f"no address for {host}")


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport with every connection made by `GuardedBackend`. It reads no proxy
    settings from the environment (a proxy would connect on our behalf, past the check).

    httpx takes no network backend of its own, so the connection pool it built is replaced
    by one with the guarded backend and the same TLS settings; the tests that refuse
    loopback, private and link-local addresses fail if that ever stops taking effect."""

    def __init__(self, allow_private: bool, timeout: float) -> None:
        super().__init__(retries=0)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), max_connections=4,
            max_keepalive_connections=4, keepalive_expiry=timeout,
            network_backend=GuardedBackend(allow_private))
