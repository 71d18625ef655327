"""``coca-eval`` for the shell commands the tests run (the documentation's examples): ``python
zygote_client.py SOCKET ARGS`` has the zygote listening on SOCKET (tests/forked_cli.py,
:class:`SocketZygote`) fork ``coca-eval ARGS`` with this process's folder, environment, stdin, stdout and
stderr, and exits with its exit code. Where the environment differs from the zygote's in what a module
reads when it is imported (or there is no zygote), it becomes a plain ``python -m coca_eval ARGS``.

It imports nothing heavy, so a command starts in milliseconds instead of the seconds torch and
transformers take to import.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

from forked_cli import served  # stdlib only: the client starts in milliseconds

SET_BY_THE_SHELL = frozenset({"_", "SHLVL", "PWD", "OLDPWD"})  # what a shell sets in its commands' env


def plain(args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-m", "coca_eval", *args])


def main(sock_path: str, args: list[str]) -> int:
    described = Path(sock_path).with_name("zygote.env.json")
    if not described.exists():
        plain(args)
    if not served(json.loads(described.read_text()), dict(os.environ), SET_BY_THE_SHELL):
        plain(args)
    request = {"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(sock_path)
        except OSError:  # the zygote is gone: a plain process does the same
            plain(args)
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
        conn.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := conn.recv(64):
            reply += chunk
    if not reply.strip():
        print("coca-eval: the run died without an exit code (killed?)", file=sys.stderr)
        return 137
    return int(reply)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
