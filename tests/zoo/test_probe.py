"""The context-use probe, on hand-written models whose answers are known: a copier scores the repeat
of a passage perfectly, and a model that needs exactly one previous token gains nothing alone."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from coca_eval.zoo.probe import context_use, copy_losses

VOCAB = 50
CERTAIN = 30.0  # a logit that makes one token all but certain


class Copier(torch.nn.Module):
    """Predicts the token ``lag`` positions back; no opinion (uniform) before that."""

    def __init__(self, lag: int) -> None:
        super().__init__()
        self.lag = lag

    def forward(self, input_ids, use_cache=False):
        b, n = input_ids.shape
        logits = torch.zeros(b, n, VOCAB)
        for i in range(self.lag - 1, n):
            logits[:, i].scatter_(1, input_ids[:, i + 1 - self.lag : i + 2 - self.lag], CERTAIN)
        return SimpleNamespace(logits=logits)


class SumOfLastTwo(torch.nn.Module):
    """Predicts (previous + current) mod VOCAB: useless alone, perfect with one token of context."""

    def forward(self, input_ids, use_cache=False):
        b, n = input_ids.shape
        logits = torch.zeros(b, n, VOCAB)
        nxt = (input_ids[:, :-1] + input_ids[:, 1:]) % VOCAB  # (b, n - 1)
        logits[:, 1:].scatter_(2, nxt[..., None], CERTAIN)
        return SimpleNamespace(logits=logits)


def _fibonacci(n: int) -> list[int]:
    ids = [1, 2]
    while len(ids) < n:
        ids.append((ids[-1] + ids[-2]) % VOCAB)
    return ids


def test_a_copier_predicts_the_second_reading_only():
    ids = [int(x) for x in torch.randint(0, VOCAB, (400,), generator=torch.Generator().manual_seed(0))]
    first, repeat = copy_losses(Copier(lag=16), ids, passage=16)
    assert repeat < 1e-3
    assert first == pytest.approx(math.log(VOCAB), rel=0.05)


def test_context_perplexities_line_up_targets_for_no_one_and_full_context():
    use = context_use(SumOfLastTwo(), _fibonacci(300), passage=8, window=64)
    assert use.ppl_alone == pytest.approx(VOCAB, rel=0.01)  # one token alone: no information
    assert use.ppl_one_back < 1.001 and use.ppl_window < 1.001
    # inside a reading only its second token lacks a previous one: one uniform loss among passage - 1
    assert use.first_loss == pytest.approx(math.log(VOCAB) / 7, rel=0.01)


def test_the_probe_command_reports_every_long_enough_document(tmp_path, capsys, monkeypatch):
    from zoo_fixtures import micro_data, micro_spec

    from coca_eval.cli import main
    from coca_eval.zoo.train import train

    data = micro_data()
    model_dir = train(micro_spec(), tmp_path / "run", data)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "long.txt").write_text(data.heldout_texts[0] * 3)
    (tmp_path / "docs" / "short.txt").write_text("too short")
    monkeypatch.setenv("COLUMNS", "200")
    main(
        [
            "zoo",
            "probe",
            str(model_dir),
            "--dataset",
            str(tmp_path / "docs"),
            "--passage",
            "8",
            "--window",
            "32",
        ]
    )
    out = capsys.readouterr().out
    assert "long" in out and "short" not in out and "repeat loss" in out
