"""``--base-url`` split into what may be recorded and what must stay secret.

A server URL can carry credentials: ``user:password@`` before the host, or a token in the query
(``?api_key=...``, Azure's ``?code=...``). Results, their config and every message show only
:attr:`ServerURL.public`, the URL without both. The whole query counts as secret, since no list of
parameter names can tell a token from a harmless setting, and none of them changes a number.
"""

from __future__ import annotations

import base64
import urllib.parse
from dataclasses import dataclass, field

from coca_eval.errors import CocaEvalError

_BAD_URL = "--base-url must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1"


@dataclass(frozen=True)
class ServerURL:
    """``public`` (scheme, host, port, path), the query to send with every request, and the secrets
    the URL carried (so messages can scrub them should a server quote them back)."""

    public: str
    query: str = field(default="", repr=False)
    user: str = field(default="", repr=False)
    password: str = field(default="", repr=False)

    def request_url(self, path: str) -> str:
        return self.public + path + (f"?{self.query}" if self.query else "")

    def basic_auth(self) -> str | None:
        """The ``Authorization`` value for credentials given in the URL, if any."""
        if not (self.user or self.password):
            return None
        pair = f"{self.user}:{self.password}".encode()
        return "Basic " + base64.b64encode(pair).decode()

    def secrets(self) -> list[str]:
        values = [v for _, v in urllib.parse.parse_qsl(self.query, keep_blank_values=True)]
        return [s for s in (self.password, self.query, *values) if s]


def parse_server_url(url: str) -> ServerURL:
    """Split ``url``; a malformed one is refused without quoting it (it may hold a password)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        parts.port  # noqa: B018 -- raises ValueError on a port that is not a number
    except ValueError:
        raise CocaEvalError(_BAD_URL) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CocaEvalError(_BAD_URL)
    host = parts.netloc.rpartition("@")[2]
    public = urllib.parse.urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    return ServerURL(public, parts.query, user, password)


def public_url(url: str) -> str:
    """What a run records for ``url``: no credentials, no query."""
    return parse_server_url(url).public
