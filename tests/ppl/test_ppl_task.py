"""The ppl task: OOM cells, dynamic-NTK per-length semantics, cell contents."""

import math

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from coca_eval.backends.hf import HFBackend, load_hf_backend
from coca_eval.journal import Journal
from coca_eval.methods import make_method
from coca_eval.ppl.engine import score_tokens
from coca_eval.ppl.params import make_params
from coca_eval.ppl.task import PplTask
from coca_eval.ppl.windows import plan_windows
from coca_eval.progress import CellProgress
from coca_eval.runner import run_cells


class OomAbove:
    """Wraps a backend so that windows longer than ``limit`` raise an out-of-memory error."""

    def __init__(self, backend, limit):
        self._backend, self._limit = backend, limit

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def score(self, input_ids, first_logit, targets):
        if input_ids.shape[1] > self._limit:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 GiB")
        return self._backend.score(input_ids, first_logit, targets)


def _run(tmp_path, corpus_file, methods, loader, batch_size=1, journal="j.jsonl", **params):
    values = dict(dataset=str(corpus_file), num_docs=2, doc_tokens=256, lengths="32,64,128", stride=16)
    values.update(params)
    ppl_params = make_params(values)
    with Journal(tmp_path / journal) as journal, CellProgress(len(methods) * 3) as progress:
        task = PplTask(ppl_params, journal, progress, batch_size)
        return run_cells(task, methods, ppl_params.lengths, journal, loader, lambda m: "w", progress)


def test_oom_cell_is_recorded_and_run_goes_on(tmp_path, tiny_llama_dir, corpus_file):
    methods = [make_method(str(tiny_llama_dir), r, None, "float32", "hf") for r in ("none", "linear:2")]
    cells = _run(tmp_path, corpus_file, methods, lambda m: OomAbove(load_hf_backend(m), 64))
    assert [(c.length, c.status) for c in cells] == [(32, "ok"), (64, "ok"), (128, "oom")] * 2
    assert cells[2].value is None and "out of memory" in cells[2].detail["error"]
    again = _run(tmp_path, corpus_file, methods, load_hf_backend)  # OOM cells are retried
    assert [c.status for c in again] == ["ok"] * 6
    assert [c.value for c in again if c.length < 128] == [c.value for c in cells if c.length < 128]


def test_cell_detail_has_per_document_sums(tmp_path, tiny_llama_dir, corpus_file):
    method = make_method(str(tiny_llama_dir), "none", "tiny", "float32", "hf")
    cells = _run(tmp_path, corpus_file, [method], load_hf_backend)
    for cell in cells:
        docs = cell.detail["docs"]
        assert len(docs) == 2 and cell.n == sum(d["tokens"] for d in docs) == 2 * 255
        assert cell.value == pytest.approx(math.exp(sum(d["nll_sum"] for d in docs) / cell.n))
        per_doc = [math.exp(d["nll_sum"] / d["tokens"]) for d in docs]
        assert cell.detail["ppl_macro"] == pytest.approx(np.mean(per_doc))
        assert cell.detail["bos"] == "never" and cell.detail["stride"] == min(16, cell.length)


def test_batch_size_changes_no_cell(tmp_path, tiny_llama_bos_dir, corpus_file):
    method = make_method(str(tiny_llama_bos_dir), "none", "tiny", "float32", "hf")
    results = [
        _run(tmp_path, corpus_file, [method], load_hf_backend, batch_size=b, journal=f"j{b}.jsonl")
        for b in (1, 5)
    ]
    for a, b in zip(*results, strict=True):
        assert a.detail["bos"] == "always"
        assert abs(a.value - b.value) <= 1e-5 * a.value
        for da, db in zip(a.detail["docs"], b.detail["docs"], strict=True):
            assert abs(da["nll_sum"] - db["nll_sum"]) / da["tokens"] <= 1e-5


def test_dynamic_ntk_scales_per_window_length(tmp_path, tiny_llama_dir, corpus_file):
    """Each forward scales for its own length, whatever ran before (transformers' cache only grows)."""
    method = make_method(str(tiny_llama_dir), "dynamic:2", None, "float32", "hf")
    plain = make_method(str(tiny_llama_dir), "none", None, "float32", "hf")
    tokenizer = AutoTokenizer.from_pretrained(tiny_llama_dir)
    ids = tokenizer(corpus_file.read_text()[:8000], add_special_tokens=False).input_ids[:900]
    plan_long, plan_short = plan_windows(900, 640, 128, "never"), plan_windows(900, 320, 64, "never")

    used = load_hf_backend(method)
    score_tokens(used, ids, plan_long)  # grows transformers' cached scaling to 640 positions
    after_long = score_tokens(used, ids, plan_short)
    fresh = score_tokens(load_hf_backend(method), ids, plan_short)
    np.testing.assert_allclose(after_long.values, fresh.values, rtol=1e-6, atol=1e-6)
    # and the patch really acts beyond the trained 256 positions
    assert not np.allclose(score_tokens(load_hf_backend(plain), ids, plan_short).values, fresh.values)


def test_rope_patch_reaches_the_model(tiny_llama_dir):
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir)
    backend = HFBackend(model, AutoTokenizer.from_pretrained(tiny_llama_dir), "w", 256)
    patched = load_hf_backend(make_method(str(tiny_llama_dir), "linear:4", None, "float32", "hf"))
    assert patched.model.config.rope_parameters["rope_type"] == "linear"
    assert patched.model.config.rope_parameters["factor"] == 4
    ids = torch.arange(2, 66).unsqueeze(0)
    targets = torch.arange(3, 67).unsqueeze(0) % 300
    assert not torch.allclose(backend.score(ids, 0, targets), patched.score(ids, 0, targets))


def test_bfloat16_scores_close_to_float32(tiny_llama_dir):
    fp32 = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    bf16 = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "bfloat16", "hf"))
    assert next(bf16.model.parameters()).dtype == torch.bfloat16
    ids, targets = torch.arange(2, 66).unsqueeze(0), torch.arange(3, 67).unsqueeze(0)
    a, b = fp32.score(ids, 0, targets), bf16.score(ids, 0, targets)
    assert b.dtype == torch.float64 and torch.allclose(a.mean(), b.mean(), rtol=2e-2)
