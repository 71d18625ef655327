"""Issue 38 item 4: credentials never follow a redirect to another host or scheme.

The openai client sent ``Authorization`` (the Bearer key, or Basic from ``user:pw@`` in
``--base-url``) to whatever host a 3xx named. A redirect off the server's own scheme, host and port
is now refused in one line that names the server that redirected; one within it is still followed.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from coca_eval.backends.openai_client import CompletionsClient
from coca_eval.errors import CocaEvalError

KEY = "sk-live-5e1f0a"


class _Server:
    """A loopback server: ``/v1/models`` answers a model list, any other path redirects to
    ``redirect_to + path`` (or to ``/v1/models`` on itself); it records every request's headers."""

    def __init__(self, redirect_to: str | None = None) -> None:
        seen = self.seen = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                seen.append((self.path, dict(self.headers)))
                if self.path == "/v1/models":
                    body = json.dumps({"data": [{"id": "tiny"}]}).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(302)
                self.send_header("Location", f"{redirect_to or ''}/v1/models")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def elsewhere():
    server = _Server()
    yield server
    server.close()


@pytest.fixture
def redirecting(elsewhere):
    server = _Server(redirect_to=elsewhere.url.replace("127.0.0.1", "localhost"))
    yield server
    server.close()


@pytest.mark.parametrize("credentials", ["bearer", "basic"])
def test_a_redirect_to_another_host_is_refused_and_gets_no_credentials(redirecting, elsewhere, credentials):
    if credentials == "bearer":
        client = CompletionsClient(f"{redirecting.url}/redirect", api_key=KEY, retries=0)
    else:
        client = CompletionsClient(redirecting.url.replace("http://", "http://alice:hunter2@") + "/redirect",
                                   retries=0)  # fmt: skip
    with pytest.raises(CocaEvalError) as refused:
        client.served_models()
    message = str(refused.value)
    assert message.startswith(f"server {redirecting.url}/redirect redirected (302) to http://localhost:")
    assert "another host or scheme" in message and "\n" not in message
    assert KEY not in message and "hunter2" not in message
    assert elsewhere.seen == []  # nothing, credentials least of all, went to the other host


def test_a_redirect_within_the_server_is_followed_with_its_credentials():
    same = _Server(redirect_to=None)  # redirects to /v1/models on itself
    try:
        client = CompletionsClient(f"{same.url}/redirect", api_key=KEY, retries=0)
        assert client.served_models() == ["tiny"]
        assert [headers.get("Authorization") for _, headers in same.seen] == [f"Bearer {KEY}"] * 2
    finally:
        same.close()


class _Moved:
    """``POST /v1/completions`` answers ``code`` to ``/v2/completions`` on itself, which echoes the
    request's method, body and Authorization as JSON."""

    def __init__(self, code: int) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/v1/completions":
                    self.send_response(code)
                    self.send_header("Location", "/v2/completions")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                reply = json.dumps({"method": self.command, "body": json.loads(body),
                                    "auth": self.headers.get("Authorization")}).encode()  # fmt: skip
                self.send_response(200)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("code", [307, 308])
def test_a_same_origin_307_or_308_on_post_is_followed_with_its_body(code):
    server = _Moved(code)
    try:
        client = CompletionsClient(server.url, api_key=KEY, retries=0)
        reply = client._call("/completions", {"prompt": [1, 2, 3]})
        assert reply == {"method": "POST", "body": {"prompt": [1, 2, 3]}, "auth": f"Bearer {KEY}"}
    finally:
        server.close()


def test_a_status_without_a_body_still_says_what_it_was():
    server = _Moved(300)  # a 300 is not followed
    try:
        with pytest.raises(
            CocaEvalError, match=r"answered 300 on /completions: Multiple Choices \(no body\)"
        ):
            CompletionsClient(server.url, retries=0)._call("/completions", {"prompt": [1]})
    finally:
        server.close()
