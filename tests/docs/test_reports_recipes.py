"""``reports/README.md`` gives the commands that made the committed runs: each one, parsed by the real
CLI (evaluation stopped before any model loads), asks for the very protocol and rows the committed run
holds, and the shipped definition puts a rerun's rows where the committed report puts them."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from doc_blocks import ROOT

PAGE = ROOT / "reports" / "README.md"


def _commands() -> list[list[str]]:
    """Every ``coca-eval ppl|passkey`` command of the page's bash blocks (continuations joined)."""
    found = []
    for line in PAGE.read_text().replace("\\\n", " ").splitlines():  # its blocks are indented in a list
        words = shlex.split(line.strip()) if line.strip().startswith("coca-eval ") else []
        if words[:2] in (["coca-eval", "ppl"], ["coca-eval", "passkey"]):
            found.append(words[1:])
    return found


class _Stop(Exception):
    pass


@pytest.mark.parametrize("args", _commands(), ids=lambda a: a[a.index("--output") + 1])
def test_a_recipe_asks_for_the_committed_runs_protocol(args, monkeypatch, tmp_path):
    from click.testing import CliRunner

    from coca_eval.cli import cli
    from coca_eval.report.definition import load_definition

    asked = {}

    def stop(task, methods, params, output, runtime, **options):
        asked.update(task=task, methods=methods, params=params)
        raise _Stop

    monkeypatch.setattr("coca_eval.api.evaluate", stop)
    output = ROOT / args[args.index("--output") + 1]
    args = [*args]
    args[args.index("--output") + 1] = str(tmp_path / "run.json")  # nothing written in the tree
    result = CliRunner().invoke(cli, args)
    assert isinstance(result.exception, _Stop), result.output
    committed = json.loads(output.read_text())["config"]
    assert asked["task"] == committed["task"]
    identity = json.loads(json.dumps(asked["params"].identity()))
    if identity.get("chat_template") == "none":  # plain prompts, all a run made before the option had
        del identity["chat_template"]
    assert identity == committed["params"]
    rows = [(m.identity()["model"], m.identity()["rope"]) for m in asked["methods"]]
    assert rows == [(m["model"], m["rope"]) for m in committed["methods"]]
    definition = load_definition(output.parent.name)
    shown = [definition.labels.get(m.label, m.label) for m in asked["methods"]]
    assert shown == [m["label"] for m in committed["methods"]]  # the rerun's rows land in their group


def test_every_committed_run_the_page_names_has_its_recipe():
    named = {m.group(1) for m in re.finditer(r"--output (reports/\S+\.json)", PAGE.read_text())}
    assert len(_commands()) == len(named) >= 3
