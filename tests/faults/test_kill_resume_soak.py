"""Kill and resume, many times: a tiny ppl run and a tiny passkey run are sent SIGKILL at random moments
(loading, scoring, appending to the journal, writing the results) and rerun each time, until every
run finishes; each must end with exactly the cells of an uninterrupted run, and no kill may leave
anything that makes the next run fail (a damaged journal, a held lock, half a results file)."""

from __future__ import annotations

import json
import random
import signal
import sys
import time

import pytest
from fault_cli import cells_of
from forked_cli import Zygote, run_listing_modules

KILLS = 50
SEED = 20260611

pytestmark = pytest.mark.slow


def _commands(model, corpus) -> dict[str, list]:
    """Each without ``--output``: about a second's work on one thread."""
    ppl = ["ppl", "--model", model, "--dataset", corpus, "--lengths", "32,64,128", "--stride", "16",
           "--doc-tokens", "256", "--num-docs", "4"]  # fmt: skip
    passkey = ["passkey", "--model", model, "--lengths", "200,250", "--samples", "6", "--max-new-tokens", "6"]
    return {"ppl": ppl, "passkey": passkey}


def _cells(path) -> list[dict]:
    """The cells, less passkey's ``prefix_reuse``: how the last run decoded (nothing, if every sample
    was journaled before the kill), not a number."""
    cells = cells_of(path)
    for cell in cells:
        cell["detail"].pop("prefix_reuse", None)
    return cells


def _check_after_kill(out) -> None:
    """A results file is whole or absent (written atomically), whatever moment the kill hit."""
    if out.exists():
        json.loads(out.read_text())


def _episode(zygote, argv, out, duration, rng) -> int:
    """Kill-and-rerun ``argv`` on ``out`` until a run finishes; the number of kills."""
    kills = 0
    while True:
        attempt = zygote.run([*argv, "--output", out], kill_after=rng.uniform(0, duration))
        if attempt.returncode != -signal.SIGKILL:
            assert attempt.returncode == 0, attempt.stderr[-2000:]
            assert "Traceback" not in attempt.stderr, attempt.stderr
            assert "skipped unreadable line" not in attempt.stderr, attempt.stderr  # a kill cuts only a tail
            return kills
        kills += 1
        _check_after_kill(out)


def test_runs_killed_at_random_moments_resume_to_the_uninterrupted_cells(
    tiny_llama_dir, corpus_file, tmp_path, monkeypatch
):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the same arithmetic in every run, and fast on a busy box
    commands = _commands(tiny_llama_dir, corpus_file)
    listing = tmp_path / "modules.txt"
    first = run_listing_modules([*commands["ppl"], "--output", tmp_path / "listing.json"], listing)
    assert first.returncode == 0, first.stderr[-2000:]
    zygote = Zygote(listing.read_text().split())  # every module a run imports
    try:
        reference, duration = {}, {}
        for name, argv in commands.items():
            start = time.monotonic()
            assert zygote.run([*argv, "--output", tmp_path / f"{name}-ref.json"]).returncode == 0
            duration[name] = time.monotonic() - start
            reference[name] = _cells(tmp_path / f"{name}-ref.json")
        assert reference["ppl"] == _cells(tmp_path / "listing.json")  # forked runs score as plain ones

        rng, kills, episodes, start = random.Random(SEED), 0, 0, time.monotonic()
        while kills < KILLS:
            name = ("ppl", "passkey")[episodes % 2]
            out = tmp_path / f"soak-{episodes}" / f"{name}.json"
            kills += _episode(zygote, commands[name], out, duration[name], rng)
            assert _cells(out) == reference[name], (name, episodes)
            episodes += 1
        took = time.monotonic() - start
        print(f"soak: {kills} kills over {episodes} resumed runs in {took:.0f} s", file=sys.stderr)
    finally:
        zygote.close()
