"""The ``coca-eval`` process ends without the interpreter's teardown, yet does what an exit must."""

from __future__ import annotations

import subprocess
import sys

import pytest

from coca_eval import __version__

PRELUDE = """
import atexit, sys, threading, time
from coca_eval.cli import run

class Teardown:
    def __del__(self):
        print("module teardown ran", flush=True)

kept_until_teardown = Teardown()
atexit.register(lambda: print("atexit handler ran"))  # unflushed: the exit must flush it
"""


def run_process(body: str, *argv: str) -> subprocess.CompletedProcess:
    script = PRELUDE + body + f"\nsys.argv = ['coca-eval', *{list(argv)!r}]\nrun()\n"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


def test_a_run_flushes_and_runs_exit_handlers_but_skips_the_teardown() -> None:
    done = run_process("", "--version")
    assert done.returncode == 0
    assert __version__ in done.stdout
    assert "atexit handler ran" in done.stdout
    assert "module teardown ran" not in done.stdout


@pytest.mark.parametrize(
    ("argv", "status"), [(("--no-such-option",), 2), (("ppl", "--lengths", "4,096"), 2), (("tasks",), 0)]
)
def test_the_exit_status_is_the_commands(argv: tuple[str, ...], status: int) -> None:
    done = run_process("", *argv)
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    assert "atexit handler ran" in done.stdout


def test_a_thread_left_running_is_waited_for() -> None:
    body = (
        "worker = threading.Thread(target=lambda: (time.sleep(0.5), print('thread finished', flush=True)))\n"
        "worker.start()\n"
    )
    done = run_process(body, "--version")
    assert done.returncode == 0
    assert "thread finished" in done.stdout
    assert "atexit handler ran" in done.stdout
