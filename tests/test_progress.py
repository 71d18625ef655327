"""Progress outside a terminal: plain lines per finished cell and at a bounded interval."""

from __future__ import annotations

import io

from rich.console import Console

from coca_eval import progress
from coca_eval.progress import CellProgress


def test_without_a_terminal_every_finished_cell_prints_a_line(monkeypatch):
    monkeypatch.setattr(progress, "PLAIN_INTERVAL_S", 0.0)
    monkeypatch.setattr(CellProgress, "_heartbeat", lambda self: None)  # the lines a unit writes, alone
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=False, width=200)
    with CellProgress(2, console) as bar:
        bar.start_cell("model @ 512", total=4)
        bar.advance(2)
        bar.finish_cell()
        bar.start_cell("model @ 1k", total=4)
        bar.finish_cell("[red]OOM")
    lines = sink.getvalue().splitlines()
    assert any("model @ 512: 2/4 done, eta" in line for line in lines)
    assert any(line.endswith("cell 1/2 done model @ 512") for line in lines)
    assert any(line.endswith("cell 2/2 done model @ 1k OOM") for line in lines)
    assert not any("━" in line for line in lines), "bars drawn into a log"
    assert len(lines) == 3


def test_without_a_terminal_a_silent_unit_still_gets_a_heartbeat(monkeypatch):
    """A unit that takes longer than the interval (a batch of long answers): lines keep coming with the
    cell, its units done and the ETA, though nothing advances; none once the cell is done."""
    import time

    monkeypatch.setattr(progress, "PLAIN_INTERVAL_S", 0.1)
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=False, width=200)
    with CellProgress(1, console) as bar:
        bar.start_cell("model @ 512", total=5, done=1)
        time.sleep(0.65)
        bar.finish_cell()
        time.sleep(0.3)
    lines = sink.getvalue().splitlines()
    beats = [line for line in lines if "model @ 512: 1/5 done, eta" in line]
    assert len(beats) >= 3, lines
    assert lines[-1].endswith("cell 1/1 done model @ 512")


def test_on_a_terminal_the_bars_are_drawn():
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=True, width=120)
    with CellProgress(1, console) as bar:
        bar.start_cell("model @ 512", total=2)
        bar.advance(2)
        bar.finish_cell()
    assert "model @ 512" in sink.getvalue() and "━" in sink.getvalue()
    assert "cell 1/1 done" not in sink.getvalue()


def test_the_eta_comes_from_the_cells_own_pace_however_slow_its_units():
    """Units that take minutes (longer than any short speed window) still give an ETA: this cell's time
    per unit done here, times the units left; units found done in the journal do not count as pace."""
    import time

    sink = io.StringIO()
    with CellProgress(1, Console(file=sink, force_terminal=False, width=200)) as bar:
        bar.start_cell("model @ 512", total=10, done=2)
        assert bar._cell_status(bar._cell).endswith("2/10 done, eta unknown")
        bar._cell_start = (time.monotonic() - 120.0, 2)  # two units done here in two minutes
        bar._progress.advance(bar._cell, 2)
        assert bar._cell_status(bar._cell).endswith("4/10 done, eta 360s")  # 60 s a unit, six left
        bar.finish_cell()


def test_a_batched_cell_shows_tokens_and_a_finite_eta_before_its_first_sample(monkeypatch, tiny_llama_dir):
    """A cell whose samples decode together finishes none for a long while: the backend's tokens (each
    prefilled prompt token, each row's decode step) come in against what the runner expects, so the
    heartbeat shows them and a finite ETA from the first forward on."""
    import re

    from coca_eval.backends.hf import load_hf_backend
    from coca_eval.backends.stopping import StopRule
    from coca_eval.methods import make_method

    monkeypatch.setattr(progress, "PLAIN_INTERVAL_S", 0.0)
    monkeypatch.setattr(CellProgress, "_heartbeat", lambda self: None)
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", "tiny", "float32", "hf"))
    prompts = [[5 + (i * 7 + k) % 200 for k in range(40)] for i in range(3)]
    seen: list[str] = []
    sink = io.StringIO()
    with CellProgress(1, Console(file=sink, force_terminal=False, width=200)) as bar:
        bar.start_cell("tiny @ 64", total=3)
        bar.expect_work(3 * (40 + 6), " of 2 cells decoding together")

        def done(i, tokens):
            seen.append(bar._cell_status(bar._cell))

        backend.generate_greedy(prompts, [0, 0, 0], StopRule(6), done, prefix_reuse=False, batch_size=3)
        tokens_done = bar._work[0]
    first = sink.getvalue().splitlines()[0]  # written right after the prefill, before any sample is done
    assert re.search(r"0/3 done, 120/138 tokens of 2 cells decoding together, eta \d+s", first), first
    assert 120 + 3 <= tokens_done <= 120 + 3 * 5  # the prompts, then one token per row still decoding


def test_cells_taken_from_the_journal_are_said_once_not_as_computed(monkeypatch):
    monkeypatch.setattr(CellProgress, "_heartbeat", lambda self: None)
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=False, width=200)
    with CellProgress(5, console) as bar:
        for _ in range(3):
            bar.journaled_cell()
        bar.start_cell("model @ 2k", total=1)
        bar.finish_cell()
        bar.journaled_cell()
    lines = sink.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        "3 cells taken from the journal (3/5 done)",
        "cell 4/5 done model @ 2k",
        "1 cell taken from the journal (5/5 done)",
    ]


def test_a_resumed_run_says_where_its_cells_came_from(tmp_path):
    from click.testing import CliRunner

    from coca_eval.cli import cli

    args = ["passkey", "--model", "zoo-rope", "--lengths", "256,512", "--samples", "2",
            "--output", str(tmp_path / "run.json")]  # fmt: skip
    assert CliRunner().invoke(cli, args).exit_code == 0
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and "2 cells taken from the journal (2/2 done)" in again.output
    assert "cell 1/2 done" not in again.output
