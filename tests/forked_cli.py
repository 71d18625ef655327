"""Runs of the real ``coca-eval`` command, each a process of its own forked from one that already
imported torch and transformers.

A fresh interpreter spends most of a tiny run importing those two (about 8 s on an idle 2-core Intel
Xeon, AVX-512), and the CLI tests start dozens of runs. A fork of a process that imported them
starts at once and is still a process: its own exit code, stdout, stderr, working directory and
environment, and it can be killed. ``coca_eval`` itself is imported in the fork, after the run's
environment is in place, as a fresh process would import it.

A module imported before the fork has read the environment it was imported in (the hub's cache and
offline switches, OpenMP's thread count), so a run whose environment differs from the zygote's in
anything but the variables read at run time (:data:`READ_AT_RUN_TIME`) runs as a plain process.
``COCA_EVAL_TEST_PLAIN_PROCESSES=1`` runs every one as a plain process.

As a script (the zygote): import the modules named in ``argv[1:]``, then for each request line on stdin
fork a run, print its pid, wait for it and print its exit code (minus the signal number if killed).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, str(ROOT / "cli.py")]

# What a tiny run imports that costs seconds; coca_eval is left to the fork.
HEAVY_MODULES = [
    "torch",
    "transformers",
    "transformers.modeling_utils",
    "transformers.models.auto.modeling_auto",
    "transformers.models.llama.modeling_llama",
    "transformers.models.gpt_neox.modeling_gpt_neox",
    "tokenizers",
    "numpy",
    "pandas",
    "scipy.stats",
    "rich.console",
    "click",
]

# Read when a run reads them, not when a module is imported: these may differ from the zygote's.
READ_AT_RUN_TIME = ("COCA_EVAL_", "PYTEST_CURRENT_TEST", "COLUMNS", "LINES", "PYTHONPATH")


# --- the zygote's side ---------------------------------------------------------------------------------


def _child(request: dict, fds: list[int] | None = None, reply=None) -> None:
    """In the fork: the run's folder, environment and files (or the caller's own stdin, stdout and
    stderr, ``fds``), then the CLI; its exit code goes to ``reply`` (a socket) if given; never returns."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[:0] = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
        if fds:
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
        else:
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
                os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        sys.argv = ["coca-eval", *request["argv"]]
        from coca_eval.cli import exit_status, keep_freed_memory, main, run_exit_handlers

        keep_freed_memory()  # as the console script does
        main(request["argv"])
        code = 0
    except SystemExit as exc:  # raised by main, after the import
        code = exit_status(exc)
    except BaseException:  # what the CLI let through: shown as a plain process would show it
        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):  # NameError too, where the import itself failed
            run_exit_handlers()
        if reply is not None:
            with contextlib.suppress(OSError):
                reply.sendall(f"{code}\n".encode())
        os._exit(code)


def served(zygote_env: dict, env: dict, also: frozenset[str] = frozenset()) -> bool:
    """Whether a run with ``env`` behaves in a fork of a zygote started with ``zygote_env`` as in a
    fresh process: they differ only in what is read at run time (or in the names ``also`` lists)."""
    changed = {k for k in set(env) | set(zygote_env) if env.get(k) != zygote_env.get(k)}
    return all(k.startswith(READ_AT_RUN_TIME) or k in also for k in changed)


def _import_all(modules: list[str]) -> None:
    for name in modules:
        with contextlib.suppress(Exception):  # a module importable only in context: the run imports it
            importlib.import_module(name)


def _serve(modules: list[str]) -> None:
    _import_all(modules)
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(pid, flush=True)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)


def _serve_socket(path: str, modules: list[str]) -> None:
    """The zygote of shell commands (tests/zygote_client.py): a run per connection, forked with the
    caller's stdin, stdout and stderr, its exit code sent back when it ends; runs may overlap."""
    import socket

    _import_all(modules)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # ended runs are reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        while chunk := conn.recv(1 << 16):  # the rest of the request, up to the caller's end of it
            message += chunk
        with open(f"{path}.served", "a") as served:  # what a test reads to know the run was forked
            print(json.dumps(json.loads(message)["argv"]), file=served)
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _child(json.loads(message), fds, conn)
        for fd in fds:
            os.close(fd)
        conn.close()


# --- the test's side -----------------------------------------------------------------------------------


class Zygote:
    """The zygote process, started with ``modules`` imported and this process's environment."""

    def __init__(self, modules: list[str]) -> None:
        self.env = dict(os.environ)
        self.folder = Path(tempfile.mkdtemp(prefix="coca-eval-zygote-"))
        self.proc = subprocess.Popen(
            [sys.executable, __file__, *modules], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        assert self._line(300) == "ready", "the zygote did not start"

    def serves(self, env: dict) -> bool:
        """Whether a run with ``env`` behaves in a fork as in a fresh process (see the module's note)."""
        return served(self.env, env)

    def _line(self, timeout: float) -> str | None:
        """The zygote's next line, or None if none comes within ``timeout`` seconds."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline().decode().strip() if ready else None

    def run(
        self, argv: list, *, cwd=None, env: dict | None = None, timeout: float | None = 600, kill_after=None
    ) -> subprocess.CompletedProcess:
        """``coca-eval ARGV`` in a fork; sent SIGKILL after ``kill_after`` seconds (exit code -9) unless it
        finished first; past ``timeout`` killed and :class:`subprocess.TimeoutExpired` raised, as
        :func:`subprocess.run` does."""
        argv = [str(a) for a in argv]
        out, err = self.folder / "stdout", self.folder / "stderr"
        request = {"argv": argv, "cwd": str(cwd or os.getcwd()), "env": dict(env or os.environ),
                   "stdout": str(out), "stderr": str(err)}  # fmt: skip
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        pid = int(self._line(60))
        code = self._line(timeout if kill_after is None else kill_after)
        if code is None:
            with contextlib.suppress(ProcessLookupError):  # it ended as the time ran out: its line comes
                os.kill(pid, signal.SIGKILL)
            code = self._line(60)
            if kill_after is None:
                raise subprocess.TimeoutExpired(["coca-eval", *argv], timeout)
        assert code is not None, f"run {pid} neither finished nor died"
        read = lambda path: path.read_text(errors="replace") if path.exists() else ""  # noqa: E731
        return subprocess.CompletedProcess(["coca-eval", *argv], int(code), read(out), read(err))

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for path in self.folder.iterdir():
            path.unlink()
        self.folder.rmdir()


_shared: Zygote | None = None


def _shared_zygote() -> Zygote:
    """One zygote per test process, started at the first run that needs it."""
    global _shared
    if _shared is None or _shared.proc.poll() is not None:
        _shared = Zygote(HEAVY_MODULES)
        atexit.register(_shared.close)
    return _shared


def run_cli(
    *args, cwd=None, env: dict | None = None, timeout: float | None = 600
) -> subprocess.CompletedProcess:
    """``coca-eval ARGS`` with this process's environment updated by ``env``: forked from the shared
    zygote where that gives what a fresh process gives, else a fresh ``python cli.py`` process."""
    full = {**os.environ, **(env or {})}
    if os.environ.get("COCA_EVAL_TEST_PLAIN_PROCESSES") != "1":
        zygote = _shared_zygote()
        if zygote.serves(full):
            return zygote.run(list(args), cwd=cwd, env=full, timeout=timeout)
    return subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=full, timeout=timeout
    )


def run_listing_modules(argv: list, listing: Path) -> subprocess.CompletedProcess:
    """``coca-eval ARGV`` in a plain process that then writes every module it imported to ``listing``."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from coca_eval.cli import main\n"
        "try:\n"
        "    main(sys.argv[2:])\n"
        "finally:\n"
        "    Path(sys.argv[1]).write_text('\\n'.join(sorted(sys.modules)))\n"
    )
    cmd = [sys.executable, "-c", code, str(listing), *map(str, argv)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


class SocketZygote:
    """A zygote for shell commands: ``tests/zygote_client.py SOCKET ARGS`` runs ``coca-eval ARGS`` forked
    from it where the command's environment is ``env`` but for what is read at run time."""

    def __init__(self, folder: Path, env: dict, modules: list[str] = HEAVY_MODULES) -> None:
        self.socket = folder / "zygote.sock"
        (folder / "zygote.env.json").write_text(json.dumps(env))
        command = [sys.executable, __file__, "--socket", str(self.socket), *modules]
        self.proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        ready, _, _ = select.select([self.proc.stdout], [], [], 300)
        assert ready and self.proc.stdout.readline().strip() == b"ready", "the zygote did not start"

    def served(self) -> list[list[str]]:
        """The arguments of every run forked so far."""
        log = Path(f"{self.socket}.served")
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


if __name__ == "__main__":
    sys.path[0] = str(ROOT)  # as for ``python cli.py``: the checkout, not this folder of test helpers
    if sys.argv[1:2] == ["--socket"]:
        _serve_socket(sys.argv[2], sys.argv[3:])
    else:
        _serve(sys.argv[1:])
