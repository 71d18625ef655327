"""Start-up: ``import coca_eval``, ``--help``, ``tasks``, ``models``, ``report`` and ``gate`` never import
torch or transformers (each checked in a fresh interpreter), and ``--help`` is quick."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "report"))
from report_fixtures import fixed_runs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "transformers", "vllm", "opencompass")


def heavy_modules_after(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter and list the heavy packages it left in ``sys.modules``."""
    probe = f"""
import sys
{code}
print("HEAVY:" + ",".join(m for m in {HEAVY!r} if m in sys.modules))
"""
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("HEAVY:")]
    return [m for m in line.removeprefix("HEAVY:").split(",") if m]


def run_cli_code(*args: str) -> str:
    return f"""
from coca_eval.cli import main
try:
    main({list(args)!r})
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
"""


def test_import_coca_eval_loads_no_heavy_package():
    assert heavy_modules_after("import coca_eval, coca_eval.api, coca_eval.taskspec") == []


@pytest.mark.parametrize(
    "args", [["--help"], ["tasks"], ["models"], ["ppl", "--help"], ["passkey", "--help"], ["ruler", "--help"]]
)
def test_listing_and_help_commands_load_no_heavy_package(args):
    assert heavy_modules_after(run_cli_code(*args)) == []


def test_a_full_report_and_gate_run_load_no_heavy_package(tmp_path):
    ppl, passkey, *_ = fixed_runs(tmp_path)
    report = run_cli_code("report", str(ppl), str(passkey), "--out", str(tmp_path / "r"), "--format", "md")
    gate = run_cli_code("gate", "--baseline", str(ppl), "--candidate", str(ppl))
    assert heavy_modules_after(report + gate) == []
    assert (tmp_path / "r" / "report.md").is_file() and (tmp_path / "r" / "plots").is_dir()
