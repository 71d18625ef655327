"""What every fault case checks: the exit code, exactly one line on stderr, no traceback, and no file
written outside the folder the user named."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from forked_cli import CLI, ROOT, run_cli  # noqa: F401  (the runs every fault case makes)


def popen_cli(*args, cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, *map(str, args)], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def assert_one_line_error(result, code: int = 2, *fragments: str) -> str:
    """The user sees one line starting ``coca-eval: error:`` and the given exit code, never a traceback."""
    err = result.stderr.strip()
    assert result.returncode == code, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(err.splitlines()) == 1, err
    assert err.startswith("coca-eval: error:"), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    return err


def assert_error_after_progress(result, code: int = 2, *fragments: str) -> str:
    """For a fault only found once a model is loaded (its tokenizer counts the tokens): the progress
    lines printed until then may stand, but the error is still one last line and no traceback."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == code, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert lines and lines[-1].startswith("coca-eval: error:"), result.stderr[-2000:]
    assert not any("error" in line.lower() for line in lines[:-1]), result.stderr[-2000:]
    for fragment in fragments:
        assert fragment in lines[-1], (fragment, lines[-1])
    return lines[-1]


def files_under(folder: Path) -> set[Path]:
    return {p for p in Path(folder).rglob("*")}


def tiny_ppl_args(model: Path, dataset: Path, output: Path, *extra) -> list:
    """A ppl run of the tiny model that takes seconds (two lengths, two documents)."""
    base = ["ppl", "--model", model, "--dataset", dataset, "--output", output]
    defaults = {"--lengths": "32,64", "--stride": "16", "--doc-tokens": "128", "--num-docs": "2"}
    given = {a for a in map(str, extra) if a.startswith("--")}
    for key, value in defaults.items():
        if key not in given:
            base += [key, value]
    return [*base, *extra]


def journal_entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def cells_of(path: Path) -> list[dict]:
    """The cells of a results file, without where they ran (identical runs compare equal)."""
    return [
        {k: v for k, v in cell.items() if k not in ("device", "dtype")}
        for cell in json.loads(Path(path).read_text())["cells"]
    ]
