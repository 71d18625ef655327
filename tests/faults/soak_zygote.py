"""Runs of the real CLI forked from one process that imported everything a run imports, so the
kill-and-resume soak spends its time in the runs it kills, not in importing torch fifty times.

As a script (the zygote): import the modules listed in the file ``argv[1]``, then for each request
line on stdin (``{"argv": [...], "stderr": PATH}``) fork a ``coca-eval ARGV`` run, print its pid, wait
for it and print its exit code (minus the signal number if killed). :class:`Zygote` drives it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path


def _preload(listing: Path) -> None:
    for name in listing.read_text().split():
        with contextlib.suppress(Exception):  # a module importable only in context: the run imports it
            importlib.import_module(name)


def _child(argv: list[str], stderr_path: str) -> None:
    """In the fork: stdio away from the zygote's pipes, then the CLI; never returns."""
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
        from coca_eval.cli import main

        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # what the CLI let through: shown as a plain process would show it
        traceback.print_exc()
    finally:
        os._exit(code)


def _serve() -> None:
    _preload(Path(sys.argv[1]))
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request["argv"], request["stderr"])
        print(pid, flush=True)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)


@dataclass
class Attempt:
    exit_code: int  # -9 when killed
    stderr: str

    @property
    def killed(self) -> bool:
        return self.exit_code == -signal.SIGKILL


class Zygote:
    """The zygote process, started with the modules listed in ``listing`` imported."""

    def __init__(self, listing: Path, folder: Path) -> None:
        cmd = [sys.executable, __file__, str(listing)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.stderr = folder / "run-stderr.txt"
        assert self._line(300) == "ready"

    def _line(self, timeout: float) -> str | None:
        """The zygote's next line, or None if none comes within ``timeout`` seconds."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline().decode().strip() if ready else None

    def run(self, argv: list, kill_after: float, timeout: float = 300) -> Attempt:
        """``coca-eval ARGV``, sent SIGKILL after ``kill_after`` seconds unless it finished first."""
        request = {"argv": [str(a) for a in argv], "stderr": str(self.stderr)}
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        pid = int(self._line(timeout))
        code = self._line(kill_after)
        if code is None:
            os.kill(pid, signal.SIGKILL)
            code = self._line(timeout)
        assert code is not None, f"run {pid} neither finished nor died in {timeout} s"
        return Attempt(int(code), self.stderr.read_text())

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


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


if __name__ == "__main__":
    _serve()
