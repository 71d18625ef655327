"""docs/plugins.md's complete small example, as a reader would try it: its files written out, the
distribution installed with pip (into a target directory, without network), then its usage snippet,
``coca-eval tasks`` and ``coca-eval report`` run in a fresh interpreter.

The snippet's ``some/model`` is no model anywhere: the echo backend needs no weights, so the run must
not look it up on the hub (it once failed there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from doc_blocks import ROOT, examples, install_page_distribution

PAGE = "docs/plugins.md"


def test_the_plugin_example_installs_and_runs(tmp_path: Path):
    files, site = install_page_distribution(PAGE, "coca-eval-echo", tmp_path)
    assert set(files) == {
        "coca-eval-echo/pyproject.toml",
        "coca-eval-echo/coca_echo/plugin.py",
        "coca-eval-echo/coca_echo/task.py",
    }

    (usage,) = [
        b
        for b in examples()
        if b.page == PAGE and b.mark and b.mark[1].startswith("tests/docs/test_plugin_example.py")
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "HF_HUB_OFFLINE": "1"}

    def run(*command: str) -> subprocess.CompletedProcess:
        result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        return result

    run(sys.executable, "-c", usage.body)
    cells = json.loads((tmp_path / "runs" / "echo.json").read_text())["cells"]
    assert [(c["task"], c["length"], c["status"]) for c in cells] == [("echo", 8, "ok"), ("echo", 16, "ok")]
    assert all(c["value"] == 1.0 for c in cells)  # one character, one token
    assert "echo" in run(sys.executable, "-m", "coca_eval", "tasks").stdout
    run(sys.executable, "-m", "coca_eval", "report", "runs/echo.json", "--format", "md", "--out", "report")
    assert "Tokens per character" in (tmp_path / "report" / "report.md").read_text()
    # the spec's check(params, methods) hook, as the page writes it, refuses before anything runs
    refused = subprocess.run(
        [sys.executable, "-c", usage.body.replace("[8, 16]", "[0, 8]")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert refused.returncode != 0 and "echo needs positive lengths (got 0)" in refused.stderr
