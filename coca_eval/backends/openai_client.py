"""HTTP for the openai backend: ``{base_url}/models``, ``/completions`` and ``/chat/completions``
(standard library).

* Credentials. The API key is read from the environment variable ``--api-key-env`` names (default
  ``OPENAI_API_KEY``) and sent as ``Authorization: Bearer``; without one, ``user:password@`` in the URL
  is sent as Basic auth. Neither, nor the URL's query, appears in a message or a result: they show
  the public URL (:mod:`coca_eval.backends.server_url`), and server text they quote is scrubbed.
* Retries. A 5xx or 429 answer, a timeout or a dropped connection is usually over in seconds (a
  server restarting, a queue full), so a request is retried ``RETRIES`` times, waiting 1, 2, 4 s (or
  the server's ``Retry-After``, up to a minute). A refused connection is not retried: nothing
  listens there, and waiting would only delay the one-line error.
* Timeouts. ``--request-timeout`` bounds a whole request, not each socket read: a server that trickles
  a byte at a time is cut off when the request's time is spent (:class:`_Deadline`).
* Redirects. Followed within the server's own scheme, host and port only, so credentials never reach
  another host (:class:`_SameOriginRedirects`).
* Replies. A body that is not JSON is reported as such; shapes are checked by
  :mod:`coca_eval.backends.openai_replies`.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

from coca_eval.backends.openai_replies import (
    ChatCompletion,
    Choice,
    Completion,
    ModelList,
    ordered_choices,
    parse_reply,
)
from coca_eval.backends.server_url import parse_server_url
from coca_eval.errors import CocaEvalError

RETRIES = 3
FIRST_WAIT_S = 1.0
LONGEST_WAIT_S = 60.0
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


_DROPPED = (TimeoutError, ConnectionResetError, ConnectionAbortedError, http.client.IncompleteRead)


class _Transient(Exception):
    """A failure worth another attempt: its message, and how long the server asked us to wait."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    try:
        return min(float(error.headers.get("Retry-After", "")), LONGEST_WAIT_S)
    except (TypeError, ValueError):
        return None


def _wait(seconds: float) -> None:
    time.sleep(seconds)


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urllib.parse.urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, parts.hostname, parts.port or default


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the server's own scheme, host and port (a 307 or 308 with the request's
    method and body, as those codes ask; urllib alone refuses them for a POST). urllib copies every header,
    ``Authorization`` included, to wherever a 3xx points; a redirect elsewhere (another host, or https
    down to http) is refused in one line naming the server that sent it and where it pointed."""

    def __init__(self, server: str) -> None:
        self.server = server

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        target = urllib.parse.urljoin(req.full_url, newurl)
        if _origin(target) != _origin(req.full_url):
            parts = urllib.parse.urlsplit(target)
            shown = f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}{parts.path}"
            raise CocaEvalError(
                f"server {self.server} redirected ({code}) to {shown}, another host or scheme: credentials "
                "are never sent there; give --base-url the address that answers"
            )
        if code in (307, 308):  # the same method and body again, which urllib declines for a POST
            kept = {k: v for k, v in req.header_items() if k.lower() not in ("content-length", "host")}
            return urllib.request.Request(
                target,
                data=req.data,
                headers=kept,
                method=req.get_method(),
                origin_req_host=req.origin_req_host,
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Deadline:
    """One request's whole time: a watchdog shuts the request's sockets down when it is spent, so a
    server that answers a byte at a time (each socket read well within the timeout) cannot hold a
    request forever. ``expired`` tells a failure it caused from a dropped connection."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                self._shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)


def _deadline_handlers(deadline: _Deadline) -> list[urllib.request.BaseHandler]:
    """http and https handlers whose connections put their sockets under ``deadline``."""

    def watched(base: type[http.client.HTTPConnection]) -> type[http.client.HTTPConnection]:
        class Watched(base):
            def connect(self) -> None:
                super().connect()
                deadline.watch(self.sock)

        return Watched

    http_connection, https_connection = (
        watched(http.client.HTTPConnection),
        watched(http.client.HTTPSConnection),
    )

    class Http(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(http_connection, req)

    class Https(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(https_connection, req, context=self._context)

    return [Http(), Https()]


class CompletionsClient:
    """Minimal JSON client for a completions server; ``sleep`` is injectable so tests need not wait."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = RETRIES,
        sleep: Callable[[float], None] | None = None,
        key_env: str = DEFAULT_KEY_ENV,
    ) -> None:
        self.url = parse_server_url(base_url)
        self.base_url = self.url.public  # what messages and results show
        self.timeout, self.retries, self.sleep = timeout, retries, sleep or _wait
        self._headers = {"Content-Type": "application/json"}
        authorization = f"Bearer {api_key}" if api_key else self.url.basic_auth()
        if authorization:
            self._headers["Authorization"] = authorization
        self._secrets = [s for s in (api_key, *self.url.secrets()) if s]
        self._key_note = (
            f"${key_env} is {'set' if api_key else 'unset'}; --api-key-env names another variable"
        )

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _http_error(self, exc: urllib.error.HTTPError, path: str) -> Exception:
        """A 5xx or 429 is worth a retry; any other status is the user's to fix."""
        detail = self._scrub(exc.read().decode(errors="replace")[:200].replace("\n", " "))
        detail = detail or f"{exc.reason} (no body)"  # a bare status still says what it was
        message = f"server {self.base_url} answered {exc.code} on {path}: {detail}"
        if exc.code >= 500 or exc.code == 429:
            return _Transient(message, _retry_after(exc))
        if exc.code in (401, 403):
            message += f" ({self._key_note})"
        return CocaEvalError(message)

    def _once(self, path: str, data: bytes | None, timeout: float) -> bytes:
        """One request's body; :class:`_Transient` for what a retry may fix, else a one-line error."""
        request = urllib.request.Request(self.url.request_url(path), data=data, headers=self._headers)
        dropped = f"server {self.base_url} dropped the connection on {path}"
        slow = f"server {self.base_url} sent no answer on {path} within --request-timeout {timeout:g} s"
        deadline = _Deadline(timeout)
        opener = urllib.request.build_opener(
            _SameOriginRedirects(self.base_url), *_deadline_handlers(deadline)
        )
        try:
            with opener.open(request, timeout=timeout) as response:
                body = response.read()
            if deadline.expired:  # the watchdog cut the body short: a partial answer is no answer
                raise _Transient(slow)
            return body
        except urllib.error.HTTPError as exc:
            if deadline.expired:
                raise _Transient(slow) from None
            raise self._http_error(exc, path) from None
        except _DROPPED as exc:
            raise _Transient(slow if deadline.expired or isinstance(exc, TimeoutError) else dropped) from None
        except urllib.error.URLError as exc:  # a refused connection, a name that does not resolve, ...
            if deadline.expired or isinstance(exc.reason, _DROPPED):
                late = deadline.expired or isinstance(exc.reason, TimeoutError)
                raise _Transient(slow if late else dropped) from None
            reason = exc.reason
        except (OSError, http.client.HTTPException) as exc:
            if deadline.expired:
                raise _Transient(slow) from None
            reason = exc
        finally:
            deadline.cancel()
        raise CocaEvalError(f"cannot reach --base-url {self.base_url}: {self._scrub(str(reason))}")

    def _call(self, path: str, payload: dict | None = None, timeout: float | None = None) -> object:
        """The decoded JSON reply, after up to ``retries`` more attempts on transient failures."""
        data = None if payload is None else json.dumps(payload).encode()
        for attempt in range(self.retries + 1):
            try:
                body = self._once(path, data, timeout or self.timeout)
                break
            except _Transient as exc:
                if attempt == self.retries:
                    raise CocaEvalError(f"{exc} (gave up after {attempt + 1} attempts)") from None
                self.sleep(exc.wait if exc.wait is not None else FIRST_WAIT_S * 2**attempt)
        try:
            return json.loads(body)
        except ValueError:
            start = self._scrub(body[:60].decode(errors="replace")).replace("\n", " ")
            raise CocaEvalError(
                f"server {self.base_url} answered {path} with text that is not JSON: {start!r}"
            ) from None

    def served_models(self) -> list[str]:
        reply = self._call("/models", timeout=min(10.0, self.timeout))
        models = parse_reply(ModelList, reply, f"the reply of {self.base_url} to /models")
        return [entry.id for entry in models.data]

    def complete(self, payload: dict) -> list[Choice]:
        """The choices of one completions request, one per prompt, in prompt order."""
        where = f"the reply of {self.base_url} to /completions"
        completion = parse_reply(Completion, self._call("/completions", payload), where)
        return ordered_choices(completion, len(payload["prompt"]), where)

    def chat(self, payload: dict) -> ChatCompletion:
        """The reply to one chat completions request (one conversation, one choice)."""
        where = f"the reply of {self.base_url} to /chat/completions"
        reply = parse_reply(ChatCompletion, self._call("/chat/completions", payload), where)
        if len(reply.choices) != 1:
            raise CocaEvalError(f"{where} has {len(reply.choices)} choices for one conversation")
        return reply


def client_for(engine, url: str) -> CompletionsClient:
    """A client for the server at ``url`` with the key in the variable ``EngineOptions`` name."""
    key_env = engine.api_key_env or DEFAULT_KEY_ENV
    timeout = engine.request_timeout
    return CompletionsClient(url, os.environ.get(key_env) or None, timeout=timeout, key_env=key_env)


def clients_for(engine) -> list[CompletionsClient]:
    """One client per ``--base-url``, in the order given."""
    return [client_for(engine, url) for url in engine.base_urls]
