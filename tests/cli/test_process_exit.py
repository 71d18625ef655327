"""The ``coca-eval`` process: it keeps the memory it frees, and ends without the interpreter's teardown
yet does what an exit must."""

from __future__ import annotations

import os
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


FAULTS = """
import resource, sys
from coca_eval.cli import keep_freed_memory

took = keep_freed_memory()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    block = b"x" * (64 << 20)  # 64 MB written, then freed
    del block
print(took, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_freed_memory_is_kept_for_the_next_tensors_unless_turned_off() -> None:
    def faults(env: dict) -> tuple[str, int]:
        done = subprocess.run(
            [sys.executable, "-c", FAULTS], capture_output=True, text=True, env=env, timeout=120
        )
        took, count = done.stdout.split()
        return took, int(count)

    kept = faults({**os.environ, "COCA_EVAL_KEEP_FREED_MEMORY": "1"})
    returned = faults({**os.environ, "COCA_EVAL_KEEP_FREED_MEMORY": "0"})
    pages = 5 * (64 << 20) // os.sysconf("SC_PAGE_SIZE")
    assert kept[0] == "True" and returned[0] == "False"
    assert returned[1] > pages // 2  # every block faulted in afresh
    assert kept[1] < pages // 4  # the first block's pages, reused
