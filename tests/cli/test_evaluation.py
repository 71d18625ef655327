"""The end the evaluating commands share: the method options arrive as one value, the preset's task
picks the rows, and only the process that leads writes the run."""

from __future__ import annotations

from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner

from coca_eval.cli import options, output
from coca_eval.cli.evaluation import MethodOptions, evaluate_and_save


def test_take_consumes_every_method_option_and_leaves_the_tasks_own():
    seen = {}

    @click.command()
    @click.option("--lengths")
    @options.method_options(output_help="out", journaled=True, splits=True)
    def command(**kwargs):
        seen["chosen"] = MethodOptions.take(kwargs)
        seen["left"] = kwargs

    result = CliRunner().invoke(command, ["--model", "m", "--rope", "none", "--lengths", "1k", "--wait"])
    assert result.exit_code == 0, result.output
    assert seen["left"] == {"lengths": "1k"}
    chosen = seen["chosen"]
    assert (chosen.models, chosen.ropes, chosen.wait, chosen.shard) == (("m",), ("none",), True, None)


@pytest.fixture
def calls(monkeypatch):
    """The shared end with its collaborators recorded instead of run (no model is loaded)."""
    recorded = {}

    def build(*args):
        recorded["methods"] = args
        return ["row"]

    def runtime(*args):
        return SimpleNamespace(share=SimpleNamespace(leads=recorded["leads"]))

    def run_task(task, methods, params, out, runtime, **task_options):
        recorded["evaluated"] = (task, methods, params, out, task_options)
        return "run"

    def save(run, out, task):
        recorded["saved"] = (run, out, task)
        return f"runs/{task}.json"

    monkeypatch.setattr(options, "build_cli_methods", build)
    monkeypatch.setattr(options, "make_runtime", runtime)
    monkeypatch.setattr("coca_eval.api.evaluate", run_task)
    monkeypatch.setattr(output, "save_default", save)
    return recorded


CHOSEN = MethodOptions(("m",), (), None, "float32", "hf", "cpu", None, None, None, False, False, None, ())


def test_the_leading_process_evaluates_saves_and_gets_the_run(calls):
    calls["leads"] = True
    saved = evaluate_and_save("longppl", "params", CHOSEN, "zoo", "ppl", batch_size=2)
    assert saved == ("run", "runs/longppl.json")
    assert calls["methods"][-2:] == ("zoo", "ppl")  # the rows of the ppl preset
    assert calls["evaluated"] == ("longppl", ["row"], "params", None, {"batch_size": 2})
    assert calls["saved"] == ("run", None, "longppl")


def test_another_rank_evaluates_but_neither_saves_nor_returns(calls):
    calls["leads"] = False
    assert evaluate_and_save("passkey", "params", CHOSEN, "zoo-passkey") is None
    assert calls["methods"][-2:] == ("zoo-passkey", "passkey")
    assert "evaluated" in calls and "saved" not in calls
