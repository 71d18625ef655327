"""``--source babilong`` against BABILong's own evaluation: fixture rows in the hub sets' layout
(``data/prepared``, 0k and 1k, qa1 and qa8), formatted and tokenised by BABILong's code at the commit it
records (``scripts/babilong_reference_values.py --prepared``, outside the project), are the prompts a
whole run builds, token for token, with and without a chat template and with prompt parts dropped."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.babilong.builder import BabilongPromptBuilder
from coca_eval.babilong.params import make_babilong_params
from coca_eval.babilong.prompts import PARTS
from coca_eval.methods import make_method

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "babilong_prepared.json").read_text(encoding="utf-8"))
PREPARED = DATA / "prepared"

pytestmark = pytest.mark.usefixtures("scripted")


def digest(ids: list[int]) -> str:
    """As the reference script writes it."""
    return hashlib.sha256(json.dumps([int(i) for i in ids]).encode()).hexdigest()


def _built(tmp_path, monkeypatch, kept, chat_template):
    """Every prompt a whole run over the fixture rows builds, by (length name, task, row)."""
    built = {}
    build = BabilongPromptBuilder.build

    def recording(self, task, length, samples, seed, prompt_length):
        samples_built = build(self, task, length, samples, seed, prompt_length)
        built.update({(f"{length // 1024}k", task, s.index): s for s in samples_built})
        return samples_built

    monkeypatch.setattr(BabilongPromptBuilder, "build", recording)
    parts = ",".join(p for p, keep in zip(PARTS, kept, strict=True) if keep) or "none"
    values = {"tasks": "qa1,qa8", "lengths": "0k,1k", "samples": 2, "source": "babilong"}
    values.update({"data": str(PREPARED), "prompt_parts": parts, "chat_template": chat_template})
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    run = evaluate("babilong", [method], make_babilong_params(values), tmp_path / "run.json", Runtime())
    assert all(cell.status == "ok" for cell in run.cells) and len(run.cells) == 4
    return built


@pytest.mark.parametrize("kept", sorted({tuple(r["kept"]) for r in REFERENCE["prepared"]}), ids=str)
@pytest.mark.parametrize("chat", ["none", "simple"])
def test_prompts_from_prepared_rows_are_babilongs(tmp_path, monkeypatch, chat_templates, kept, chat):
    template = "none" if chat == "none" else str(chat_templates["simple"])
    built = _built(tmp_path, monkeypatch, kept, template)
    expected = [r for r in REFERENCE["prepared"] if tuple(r["kept"]) == kept]
    assert REFERENCE["babilong_commit"] == "7a6efee29f5cac03c3c410e6799c80fd2ffe3610"
    assert len(expected) == len(built) == 8
    for row in expected:
        sample = built[(row["length"], row["task"], row["row"])]
        reference = row["plain" if chat == "none" else "chat"]
        assert (len(sample.ids), digest(list(sample.ids))) == (reference["tokens"], reference["sha256"]), row
