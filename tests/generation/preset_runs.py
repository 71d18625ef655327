"""Small runs of the four quick generation presets through the digest backend, and the parts of their
results files that must not move when the generation base is reorganised.

Regenerate the committed outputs (only when a change is meant to move prompts or scores):

    .venv/bin/python -m tests.generation.preset_runs tests/generation/data/preset_runs
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Each preset with fewer samples; every other parameter is the preset's own.
RUNS = {
    "ruler-quick": ["ruler", "--preset", "ruler-quick", "--samples", "1"],
    "passkey-quick": ["passkey", "--preset", "passkey-quick", "--samples", "4", "--model", "smollm2-135m"],
    "helmet-quick": ["helmet", "--preset", "helmet-quick", "--samples", "1"],
    "babilong-quick": ["babilong", "--preset", "babilong-quick", "--samples", "2"],
}
# Keys that say when, where and with which library versions a run was made, not what it computed.
PROVENANCE = ("created", "coca_eval_version", "git", "git_dirty")
CONFIG_PROVENANCE = ("journal", "environment")


def register_digest_backend() -> None:
    from coca_eval.backends.registry import BACKENDS, BackendEntry

    if "digest" not in BACKENDS:
        BACKENDS.add("digest", BackendEntry("tests.generation.digest_backend:load", "answers with a digest"))


def run_preset(name: str, output: Path, *extra: str):
    """Run preset ``name`` in process (with ``extra`` options); the click result (exit code, output)."""
    from click.testing import CliRunner

    from coca_eval.cli import cli

    register_digest_backend()
    return CliRunner().invoke(cli, [*RUNS[name], "--backend", "digest", "--output", str(output), *extra])


def computed(results_file: Path) -> dict:
    """The results document without its provenance."""
    document = json.loads(results_file.read_text())
    for key in PROVENANCE:
        document.pop(key, None)
    for key in CONFIG_PROVENANCE:
        document["config"].pop(key, None)
    return document


def main(folder: str) -> None:
    import tempfile

    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for name in RUNS:
            output = Path(scratch) / f"{name}.json"
            result = run_preset(name, output)
            if result.exit_code != 0:
                raise SystemExit(f"{name}: exit {result.exit_code}\n{result.output}")
            text = json.dumps(computed(output), indent=1, sort_keys=True) + "\n"
            (target / f"{name}.json").write_text(text)


if __name__ == "__main__":
    main(sys.argv[1])
