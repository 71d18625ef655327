"""A Hugging Face Hub stand-in on localhost, answering the few endpoints an upload calls and keeping
every request, so an upload is tested at the HTTP boundary: ``huggingface_hub`` runs unmodified and
only the server is not the Hub's."""

from __future__ import annotations

import base64
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml


@dataclass
class FakeHub:
    """The server's address and what it was sent: each request, and the files of each commit."""

    endpoint: str = ""
    requests: list[tuple[str, str]] = field(default_factory=list)
    created: list[dict] = field(default_factory=list)
    commits: list[dict[str, bytes]] = field(default_factory=list)
    keeps: bool = True  # False: a commit is acknowledged and its files are lost (the repo lists none)

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, dict]:
        self.requests.append((method, path))
        if method == "POST" and path == "/api/repos/create":
            request = json.loads(body)
            self.created.append(request)
            repo = f"{request.get('organization') or 'user'}/{request['name']}"
            return 200, {"url": f"{self.endpoint}/datasets/{repo}", "name": repo}
        if method == "POST" and path == "/api/validate-yaml":
            return _validate_card(json.loads(body)["content"])
        if method == "POST" and re.fullmatch(r"/api/datasets/[^/]+/[^/]+/preupload/[^/?]+.*", path):
            files = json.loads(body)["files"]
            return 200, {
                "files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]
            }
        commit = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/commit/[^/?]+.*", path)
        if method == "GET" and re.fullmatch(r"/api/datasets/[^/]+/[^/]+/tree/[^?]+(\?.*)?", path):
            stored = {p: b for files in self.commits for p, b in files.items()} if self.keeps else {}
            return 200, [
                {"type": "file", "path": p, "size": len(b), "oid": "0" * 40} for p, b in stored.items()
            ]
        if method == "POST" and commit:
            self.commits.append(_committed_files(body))
            url = f"{self.endpoint}/datasets/{commit.group(1)}/commit/{'1' * 40}"
            return 200, {"commitUrl": url, "commitOid": "1" * 40, "pullRequestUrl": None}
        return 404, {"error": f"the fake hub does not serve {method} {path}"}


def _validate_card(content: str) -> tuple[int, dict]:
    """As the Hub refuses a card whose YAML header does not parse or whose ``configs`` are malformed."""
    match = re.match(r"---\n(.*?)\n---\n", content, re.S)
    try:
        header = yaml.safe_load(match.group(1)) if match else None
    except yaml.YAMLError as error:
        return 400, {"errors": [{"message": str(error)}]}
    configs = (header or {}).get("configs")
    well_formed = isinstance(configs, list) and all(
        isinstance(c.get("config_name"), str) and all({"split", "path"} <= set(f) for f in c["data_files"])
        for c in configs
    )
    return (200, {}) if well_formed else (400, {"errors": [{"message": "configs are malformed"}]})


def _committed_files(body: bytes) -> dict[str, bytes]:
    """A commit's NDJSON body: the files it adds, by path, decoded."""
    files = {}
    for line in body.decode().splitlines():
        entry = json.loads(line)
        if entry["key"] == "file":
            value = entry["value"]
            files[value["path"]] = base64.b64decode(value["content"])
    return files


def serve() -> tuple[FakeHub, ThreadingHTTPServer]:
    """A running fake hub on a free port (stop it with ``server.shutdown()``)."""
    hub = FakeHub()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, payload = hub.answer(self.command, self.path, body)
            data = json.dumps(payload).encode()  # a dict, or the list a tree listing is
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_HEAD = _reply

        def log_message(self, *args) -> None:  # keep the test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hub.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return hub, server
