"""The thinking options on the command line: bad input is one line, exit 2, before any model loads,
on every generation family's command; a good one reaches the run (the cell records it)."""

from __future__ import annotations

import json

import pytest

from coca_eval.cli import main
from tests.thinking.thinking_backend import CALLS

pytestmark = pytest.mark.usefixtures("thinking_model")
RUN = ("--model", "zoo-rope", "--backend", "thinking", "--samples", "2", "--lengths", "900")


def _cli(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
        raise SystemExit(0)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (("--thinking", "maybe"), "'maybe' is not one of"),
        (("--think-budget", "0"), "--think-budget must be a whole number of tokens from 1"),
        (("--think-budget", "-3"), "--think-budget must be a whole number of tokens from 1"),
        (("--think-markers", "<think>"), "--think-markers takes OPEN,CLOSE"),
        (("--thinking", "on", "--chat-template", "none"), "needs a chat template that takes enable_thinking"),
        (("--thinking", "on", "--chat-template", "PLAIN"), "does not take enable_thinking"),
    ],
)
@pytest.mark.parametrize("family", ["ruler", "babilong", "helmet", "graphwalks", "mrcr"])
def test_bad_thinking_input_is_one_line_exit_2(capsys, tmp_path, thinking_model, options, says, family):
    options = tuple(thinking_model["plain"] if o == "PLAIN" else o for o in options)
    code, out, err = _cli(capsys, family, *RUN, *options, "--output", str(tmp_path / "run.json"))
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert CALLS == [] and not (tmp_path / "run.json").exists()


def test_the_options_reach_the_cells(capsys, tmp_path, thinking_model):
    output = tmp_path / "run.json"
    args = ("--tasks", "niah_single_1", "--chat-template", thinking_model["thinking"], "--seed", "2")
    code, out, err = _cli(capsys, "ruler", *RUN, *args, "--thinking", "on", "--think-budget", "40",
                          "--think-markers", "<think>,</think>", "--output", str(output))  # fmt: skip
    assert code == 0, err
    (cell,) = json.loads(output.read_text())["cells"]
    assert cell["value"] == 100.0 and cell["detail"]["cut_in_thought"] == 1.0
    assert cell["detail"]["think_budget"] == 40 and cell["detail"]["thinking"] == "on"
    assert "think budget 40 tokens (not in N); samples cut in thought: niah_single_1 900 100 %" in out


def test_the_report_notes_the_share_cut_in_thought(tmp_path, thinking_model):
    from coca_eval.results import load_run
    from coca_eval.taskspec import TASKS

    output = tmp_path / "run.json"
    args = (
        "--tasks",
        "niah_single_1",
        "--chat-template",
        thinking_model["thinking"],
        "--think-budget",
        "500",
    )
    with pytest.raises(SystemExit):
        main(["ruler", *RUN, *args, "--output", str(output)])
        raise SystemExit(0)
    run = load_run(output)
    (first, *_) = TASKS.get("ruler").report.tables(run.cells, None, [run])
    assert any("samples cut in thought: niah_single_1 900 0 %" in note for note in first.notes)
