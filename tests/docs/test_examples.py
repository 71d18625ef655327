"""Docs that cannot lie: every bash and Python example of README.md and docs/*.md runs here, offline,
in a temporary directory (nothing lands in the checkout), unless its first line says what it needs
that this machine lacks, and then the block must really use that (see ``doc_blocks``).

``coca-eval``, ``python`` and ``torchrun`` in an example are this checkout's, through small scripts on
``PATH``, exactly as ``.venv/bin`` provides them after ``scripts/install.sh``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import NEEDS, ROOT, Block, blocks, examples, files_of, pages
from forked_cli import SocketZygote

SETUP = "bash scripts/install.sh && .venv/bin/coca-eval ppl --stride 512"
TESTS = 'bash scripts/install.sh dev && .venv/bin/python -m pytest -m "not slow" -n 2'
TIMEOUT_S = {False: 600, True: 2400}  # by whether the example is a slow one (on a busy 2-core machine)


def _python_path() -> str:
    """The checkout first, then whatever the session added (the checkout's plug-in declarations)."""
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


def runnable(block: Block):
    marks = [pytest.mark.slow] if block.mark and block.mark[0] == "slow" else []
    return pytest.param(block, id=block.name, marks=marks)


RUNNABLE = [runnable(b) for b in examples() if b.mark is None or b.mark[0] == "slow"]
MARKED = [pytest.param(b, id=b.name) for b in examples() if b.mark and b.mark[0] in ("needs", "run by")]
WRITTEN = [pytest.param(b, id=b.name) for b in examples() if b.mark and b.mark[0] == "file"]


def shims(directory: Path, coca_eval: str = "-m coca_eval") -> dict[str, str]:
    """An environment whose ``coca-eval`` (``python COCA_EVAL``), ``python`` and ``torchrun`` are this
    checkout's."""
    for name, module in (
        ("coca-eval", coca_eval),
        ("python", ""),
        ("torchrun", "-m torch.distributed.run"),
    ):
        script = directory / name
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" {module} "$@"\n')
        script.chmod(0o755)
    path = os.pathsep.join([str(directory), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "PYTHONPATH": _python_path(), "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def example_env(tmp_path_factory):
    """The examples' environment, one per test process: its ``coca-eval`` is forked from a zygote that
    has imported torch and transformers (tests/forked_cli.py), as ``coca-eval`` of ``.venv/bin`` is
    this checkout's CLI in a fresh process; ``COCA_EVAL_TEST_PLAIN_PROCESSES=1`` makes each a plain one."""
    directory = tmp_path_factory.mktemp("bin")
    if os.environ.get("COCA_EVAL_TEST_PLAIN_PROCESSES") == "1":
        yield shims(directory)
        return
    client = ROOT / "tests" / "zygote_client.py"
    env = shims(directory, f'"{client}" "{directory / "zygote.sock"}"')
    zygote = SocketZygote(directory, env)
    yield env
    zygote.close()


@pytest.mark.parametrize("block", RUNNABLE)
def test_the_example_runs(block: Block, tmp_path: Path, example_env: dict[str, str]):
    work = tmp_path / "work"
    work.mkdir()
    for relative, content in files_of(block.page, before_line=block.line).items():
        (work / relative).parent.mkdir(parents=True, exist_ok=True)
        (work / relative).write_text(content)
    script = work / ("example.sh" if block.language == "bash" else "example.py")
    script.write_text(block.body)
    command = (
        ["bash", "-eo", "pipefail", str(script)]
        if block.language == "bash"
        else [sys.executable, str(script)]
    )
    result = subprocess.run(
        command,
        cwd=work,
        env=example_env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S[bool(block.mark)],
    )
    assert result.returncode == 0, f"{block.name} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"


@pytest.mark.parametrize("block", MARKED)
def test_a_marked_example_really_needs_what_it_names(block: Block):
    kind, value = block.mark
    if kind == "run by":
        test_file = ROOT / value.split()[0]
        assert test_file.is_file() and block.page in test_file.read_text(), (
            f"{test_file} does not run {block.page}"
        )
        return
    assert block.needs, f"{block.name}: '# needs:' names nothing"
    for need in block.needs:
        assert need in NEEDS, f"{block.name}: unknown need {need!r} (known: {', '.join(NEEDS)})"
        assert re.search(NEEDS[need], block.body), f"{block.name} is marked '{need}' but uses nothing of it"


@pytest.mark.parametrize("block", WRITTEN)
def test_a_file_block_of_python_compiles(block: Block):
    if block.language == "python":
        compile(block.body, block.name, "exec")


def test_every_fence_names_its_language():
    """A bare fence would slip past the runner; ``text`` says a block is no example."""
    bare = [b.name for page in pages() for b in blocks(page) if not b.language]
    assert bare == []


def test_there_are_examples_that_run_by_default():
    assert len([p for p in RUNNABLE if not p.marks]) >= 5


def test_the_readme_setup_commands_are_the_ones_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert SETUP in readme and TESTS in readme
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert TESTS in ci, ".ci/run must run the README's test command verbatim"


@pytest.mark.parametrize(("elapsed", "runs"), [(10, True), (50, False)])
def test_ci_starts_a_heavier_suite_only_where_its_slow_hour_time_fits(elapsed, runs):
    """.ci/run's ``fits``: with 100 s of budget and 60 s needed, it runs at 10 s and names it at 50 s."""
    ci = (ROOT / ".ci" / "run").read_text()
    fits = re.search(r"^fits\(\) \{\n.*?^\}\n", ci, re.S | re.M)
    assert fits, ".ci/run no longer defines fits()"
    script = f"{fits.group(0)}budget=100\nSECONDS={elapsed}\nfits 'some suite' 60 'run it' && echo RUNS\n"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert ("RUNS" in done.stdout) == runs
    assert ("ci: NOT RUN, some suite: up to 60 s" in done.stdout) == (not runs), done.stdout
    for suite in ("slow suite", "vLLM suite", "OpenCompass suite"):
        assert f'if fits "{suite}"' in ci, suite
