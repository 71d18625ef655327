"""``decay`` on tiny models: the measured curve of planted all-ones q = k is the closed form, the
frequencies follow a rope patch, a finished document is never measured again, ALiBi is refused."""

import math

import numpy as np
import pytest
import torch
from planted import HEAD_DIM, PLANES, constant_qk, plant

from coca_eval.analyses import closed_forms as cf
from coca_eval.analyses.records import DecayDetail
from coca_eval.errors import CocaEvalError

BASE = 10000.0
THETA = np.array([BASE ** (-2 * j / HEAD_DIM) for j in range(PLANES)])


@pytest.fixture(scope="module")
def ones_model(tmp_path_factory):
    ones = torch.ones(PLANES, dtype=torch.complex64) * (1 + 1j)
    return plant(tmp_path_factory.mktemp("ones"), constant_qk(ones, ones), attention_bias=True)


def test_measured_logit_of_all_ones_equals_the_closed_form(analyse, ones_model):
    cell = analyse("decay", ones_model).cells[0]
    detail = DecayDetail.model_validate(cell.detail)
    scaling = HEAD_DIM**-0.5
    for s in (1, 2, 5, 11):
        expected = scaling * HEAD_DIM * cf.all_ones(THETA, np.array([s]))[0]
        column = detail.edges.index(s)  # distances up to 16 have a bin each
        assert [row[column] for row in detail.measured] == pytest.approx([expected] * 2, rel=1e-5)
    assert detail.geometries[0].theta == pytest.approx(THETA.tolist(), rel=1e-6)


def test_curves_use_the_patched_frequencies(analyse, ones_model):
    cell = analyse("decay", ones_model, rope="linear:4").cells[0]
    geometry = DecayDetail.model_validate(cell.detail).geometries[0]
    assert geometry.theta == pytest.approx((THETA / 4).tolist(), rel=1e-6)
    assert geometry.roformer == pytest.approx(
        cf.relative_bound(THETA / 4, np.array(cell.detail["distances"])).tolist(), rel=1e-5
    )


def test_finished_documents_are_not_measured_again(analyse, tiny_llama_dir, tmp_path, monkeypatch):
    from coca_eval.analyses.decay import DecayAnalysis
    from coca_eval.journal import Journal

    output = tmp_path / "resume.json"
    first = analyse("decay", tiny_llama_dir, output=output).cells[0]
    journal = output.with_suffix(".journal.jsonl")
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(line for line in lines if '"kind": "cell"' not in line) + "\n")
    with Journal(journal) as kept:
        assert not kept.cells and len(next(iter(kept.parts.values()))) == 2

    def refuse(*args, **kwargs):
        raise AssertionError("a journaled document was measured again")

    monkeypatch.setattr(DecayAnalysis, "measure", refuse)
    again = analyse("decay", tiny_llama_dir, output=output).cells[0]
    assert again.value == first.value and math.isfinite(first.value)


def test_a_model_without_rope_is_one_line_error(analyse, tmp_path):
    from coca_eval.models.alibi import AlibiLlamaConfig, AlibiLlamaForCausalLM

    alibi = plant(
        tmp_path / "alibi",
        lambda model: None,
        config_class=AlibiLlamaConfig,
        model_class=AlibiLlamaForCausalLM,
    )
    with pytest.raises(CocaEvalError, match="no rotary position embedding.*decay analysis has no meaning"):
        analyse("decay", alibi)
