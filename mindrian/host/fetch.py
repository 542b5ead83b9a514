"""The WebFetch tool's fetching: http and https only, bounded in size and time, and no
private addresses unless the user approved them.

A served agent runs on the operator's machine, inside the operator's network:
a URL naming ``localhost``, a private range or a link-local address (a cloud's
metadata service at 169.254.169.254) would let whoever talks to the agent reach
services that the network keeps from them. Such a URL is therefore never
pre-approved by a skill's ``allowed-tools``: only the user may approve it. The
host is resolved, every address it resolves to is checked, and each redirect
is checked again as a new URL. (A name that resolves differently between the
check and the connection is not caught: DNS rebinding needs a resolver the
fetch is pinned to, which the standard library does not offer.)
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

from mindrian.errors import MindrianError

__all__ = ["FETCH_CAP", "FETCH_TIMEOUT_S", "FetchRefusedError", "Target", "fetch", "target_of"]

#: Bytes read from a response at most.
FETCH_CAP = 1_000_000
#: Seconds a fetch may take to connect and each read.
FETCH_TIMEOUT_S = 20.0
_MAX_REDIRECTS = 5
_SHOWN = 30_000


class FetchRefusedError(MindrianError, ValueError):
    """A URL the tool does not fetch; the message is the reason the model is told."""


@dataclass(frozen=True)
class Target:
    """A URL checked for fetching."""

    url: str
    """The URL as given."""
    host: str
    """Its host name, lower case."""
    private: bool
    """Whether it resolves to a loopback, private, link-local or otherwise non-public address."""


def target_of(url: str) -> Target:
    """``url`` checked: http or https with a host; raises :class:`FetchRefusedError` otherwise."""
    parts = urlsplit(url.strip()) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchRefusedError(f"{url!r} is not an http:// or https:// URL")
    host = parts.hostname.lower()
    return Target(url.strip(), host, _private(host, parts.port or 0))


def _private(host: str, port: int) -> bool:
    try:
        infos = socket.getaddrinfo(host, port or None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as error:
        raise FetchRefusedError(f"cannot resolve {host}: {error}") from None
    return any(not ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_global for info in infos)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # each hop is checked by fetch() before it is followed


def fetch(target: Target, *, allow_private: bool) -> str:
    """The text at ``target`` (HTML reduced to its text), cut at 30 000 characters.

    Redirects are followed up to five times, each new URL checked as the first
    was; a private address is refused unless ``allow_private``.
    """
    opener = urllib.request.build_opener(_NoRedirect)
    current = target
    for _hop in range(_MAX_REDIRECTS + 1):
        if current.private and not allow_private:
            raise FetchRefusedError(
                f"{current.host} is a loopback or private address; only the user may approve it"
            )
        request = urllib.request.Request(current.url, headers={"User-Agent": "mindrian-webfetch"})
        try:
            with opener.open(request, timeout=FETCH_TIMEOUT_S) as response:
                body = response.read(FETCH_CAP + 1)
                kind = response.headers.get_content_type()
                charset = response.headers.get_content_charset() or "utf-8"
        except urllib.error.HTTPError as error:
            location = error.headers.get("Location") if 300 <= error.code < 400 else None
            if location is None:
                raise FetchRefusedError(f"HTTP {error.code} from {current.url}") from None
            current = target_of(urljoin(current.url, location))
            continue
        except (urllib.error.URLError, OSError) as error:
            raise FetchRefusedError(f"cannot fetch {current.url}: {error}") from None
        return _shown(body, kind, charset)
    raise FetchRefusedError(f"more than {_MAX_REDIRECTS} redirects from {target.url}")


def _shown(body: bytes, kind: str, charset: str) -> str:
    note = "\n[response cut at 1 MB]" if len(body) > FETCH_CAP else ""
    text = body[:FETCH_CAP].decode(charset, errors="replace")
    if kind == "text/html":
        text = _text_of_html(text)
    elif not (kind.startswith("text/") or kind.endswith(("json", "xml", "yaml"))):
        return f"[{kind} content, {len(body)} bytes: not text]"
    if len(text) > _SHOWN:
        text, note = text[:_SHOWN], note or f"\n[text cut at {_SHOWN} characters]"
    return text + note


class _Text(HTMLParser):
    _SKIPPED = frozenset({"script", "style", "noscript", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._skipping += tag in self._SKIPPED

    def handle_endtag(self, tag: str) -> None:
        self._skipping -= tag in self._SKIPPED and self._skipping > 0

    def handle_data(self, data: str) -> None:
        if not self._skipping and data.strip():
            self.parts.append(data.strip())


def _text_of_html(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return "\n".join(parser.parts)
