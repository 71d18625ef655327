"""Issue 38 item 1: a score that is no number is never read as "not scored".

A model that yields NaN from some position on (one NaN embedding row), a server that answers NaN or a
log-prob above 0, and a journal such a run left behind by an older version: each gives an ``error``
cell with the reason (or is scored again), counts every scored token, and never an ``ok`` cell with
a smaller sum. A mean loss past float64's ``exp`` range is an ``inf`` cell, not an OverflowError.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter

import pytest
from fault_cli import assert_error_after_progress, journal_entries
from test_gate_cli import invoke

from coca_eval.ppl.task import combine_cell
from tests.backends import fake_vllm
from tests.backends.fake_completions import FakeServer

QUICK = ["--lengths", "32", "--stride", "32", "--doc-tokens", "128", "--num-docs", "2"]
CONTEXT = {"stride": 32, "mode": "sliding", "bos": "never", "doc_tokens": 128}
BASE = dict(task="ppl", method="m", metric="ppl", length=32, dataset="d")


def _ppl(capsys, model_dir, corpus_file, output, *extra):
    args = ["ppl", "--model", model_dir, "--dataset", corpus_file, *QUICK, "--output", output]
    return invoke(capsys, *args, *extra)


def _cell(path) -> dict:
    return json.loads(path.read_text())["cells"][0]


def _nan_row_model(source, target, token: int):
    """A copy of ``source`` whose embedding row ``token`` is NaN: every position from that token's first
    appearance on scores NaN (attention carries it forward), the positions before stay finite."""
    import torch
    from transformers import AutoModelForCausalLM

    shutil.copytree(source, target)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight[token] = float("nan")
    model.save_pretrained(target)
    return target


@pytest.fixture(scope="module")
def common_token(tiny_llama_dir, corpus_file) -> int:
    """A token that appears in every document, but not at its start."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_llama_dir)
    text = json.loads(corpus_file.read_text().splitlines()[0])["text"]
    ids = tokenizer(text, add_special_tokens=False).input_ids[:128]
    return Counter(ids[20:]).most_common(1)[0][0]


@pytest.fixture(scope="module")
def nan_model_dir(tmp_path_factory, tiny_llama_dir, common_token):
    return _nan_row_model(tiny_llama_dir, tmp_path_factory.mktemp("nan") / "model", common_token)


def test_a_nan_embedding_row_makes_an_error_cell_with_every_token_counted(
    tmp_path, capsys, tiny_llama_dir, nan_model_dir, corpus_file
):
    healthy = _ppl(capsys, tiny_llama_dir, corpus_file, tmp_path / "healthy.json")
    poisoned = _ppl(capsys, nan_model_dir, corpus_file, tmp_path / "nan.json")
    assert healthy.returncode == 0 and poisoned.returncode == 0, poisoned.stderr[-2000:]
    good, bad = _cell(tmp_path / "healthy.json"), _cell(tmp_path / "nan.json")
    assert good["status"] == "ok"
    assert bad["status"] == "error" and bad["value"] is None
    assert bad["n"] == good["n"] == 2 * 127  # no NaN token dropped from the count
    assert "NaN" in bad["detail"]["error"] and "scored tokens" in bad["detail"]["error"]
    assert all(doc["tokens"] == 127 and doc["nll_sum"] is None for doc in bad["detail"]["docs"])


def test_a_document_with_no_finite_score_is_an_error_cell_not_a_traceback(
    tmp_path, capsys, tiny_llama_bos_dir, corpus_file
):
    every_window_opens_with_nan = _nan_row_model(tiny_llama_bos_dir, tmp_path / "model", 0)  # BOS's row
    result = _ppl(capsys, every_window_opens_with_nan, corpus_file, tmp_path / "run.json", "--bos", "always")
    assert result.returncode == 0, result.stderr[-2000:]
    cell = _cell(tmp_path / "run.json")
    assert cell["status"] == "error" and cell["n"] == 2 * 128
    assert "128 NaN of 128 scored tokens" in cell["detail"]["error"]


def test_the_vllm_backend_gives_the_same_error_cell(
    monkeypatch, tmp_path, capsys, nan_model_dir, corpus_file
):
    fake_vllm.install(monkeypatch)
    result = _ppl(capsys, nan_model_dir, corpus_file, tmp_path / "run.json", "--backend", "vllm")
    assert result.returncode == 0, result.stderr[-2000:]
    cell = _cell(tmp_path / "run.json")
    assert cell["status"] == "error" and cell["n"] == 2 * 127 and "NaN" in cell["detail"]["error"]


def _served(capsys, model, bos_dir, corpus_file, output, rewrite=None):
    with FakeServer(model, "tiny", rewrite=rewrite) as url:
        return _ppl(capsys, bos_dir, corpus_file, output, "--backend", "openai", "--base-url", url)


def _logprobs_set_to(value: float):
    def rewrite(route, status, body):
        if route == "/v1/completions":
            for choice in body["choices"]:
                logprobs = choice["logprobs"]["token_logprobs"]
                logprobs[5:] = [value] * len(logprobs[5:])
        return status, body

    return rewrite


@pytest.mark.parametrize(("answer", "reason"), [(math.nan, "NaN"), (5.0, "with a log-prob above 0")])
def test_a_server_answering_no_probability_gives_an_error_cell_and_a_healthy_rerun_rescores(
    tmp_path, capsys, served_model, tiny_llama_bos_dir, corpus_file, answer, reason
):
    out = tmp_path / "run.json"
    poisoned = _served(capsys, served_model, tiny_llama_bos_dir, corpus_file, out, _logprobs_set_to(answer))
    assert poisoned.returncode == 0, poisoned.stderr[-2000:]
    cell = _cell(out)
    assert cell["status"] == "error" and cell["n"] == 256 and reason in cell["detail"]["error"]
    parts = [e["data"] for e in journal_entries(tmp_path / "run.journal.jsonl") if e["kind"] == "part"]
    assert parts and all(p["nll_sum"] is None and p["tokens"] == 128 and p["error"] for p in parts)

    rerun = _served(capsys, served_model, tiny_llama_bos_dir, corpus_file, out)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "scoring 2 journaled document(s) again" in rerun.stderr  # said, not silent
    fresh = tmp_path / "fresh.json"
    assert _served(capsys, served_model, tiny_llama_bos_dir, corpus_file, fresh).returncode == 0
    assert _cell(out)["status"] == "ok" and _cell(out)["value"] == _cell(fresh)["value"]


def test_a_journal_an_older_version_poisoned_is_rescored_not_a_crash(
    tmp_path, capsys, served_model, tiny_llama_bos_dir, corpus_file
):
    out = tmp_path / "run.json"
    assert _served(capsys, served_model, tiny_llama_bos_dir, corpus_file, out).returncode == 0
    healthy = _cell(out)
    journal = tmp_path / "run.journal.jsonl"
    entries = [e for e in journal_entries(journal) if e["kind"] == "part"]
    for entry in entries:  # what NaN answers journaled before: an empty sum over no token
        entry["data"].update(nll_sum=0.0, tokens=0)
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries))
    out.unlink()
    rerun = _served(capsys, served_model, tiny_llama_bos_dir, corpus_file, out)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "Traceback" not in rerun.stderr
    assert _cell(out)["value"] == healthy["value"] and _cell(out)["n"] == healthy["n"]


def test_a_journaled_part_that_dropped_nan_tokens_is_rescored(tmp_path, capsys, tiny_llama_dir, corpus_file):
    out = tmp_path / "run.json"
    assert _ppl(capsys, tiny_llama_dir, corpus_file, out).returncode == 0
    healthy = _cell(out)
    journal = tmp_path / "run.journal.jsonl"
    entries = [e for e in journal_entries(journal) if e["kind"] == "part"]
    for entry in entries:  # an older version summed only the finite scores: fewer tokens, smaller sum
        entry["data"].update(nll_sum=entry["data"]["nll_sum"] / 2, tokens=60)
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries))
    out.unlink()
    assert _ppl(capsys, tiny_llama_dir, corpus_file, out).returncode == 0
    assert _cell(out)["value"] == healthy["value"] and _cell(out)["n"] == healthy["n"]


@pytest.mark.parametrize("nll_per_token", [709.5, 800.0, 1e6])
def test_a_mean_loss_past_exps_range_is_an_inf_cell(nll_per_token):
    parts = [
        {"doc_id": "a", "nll_sum": nll_per_token * 10, "tokens": 10},
        {"doc_id": "b", "nll_sum": 20.0, "tokens": 10},
    ]
    per_doc = combine_cell(BASE, parts[:1], CONTEXT)
    assert per_doc.status == "inf" and per_doc.n == 10
    mixed = combine_cell(BASE, parts, CONTEXT)
    assert mixed.n == 20 and mixed.detail["ppl_macro"] is None
    assert mixed.status == ("inf" if nll_per_token > 1400 else "ok")


def test_an_infinite_nll_is_an_inf_cell_and_nan_outranks_it():
    infinite = {"doc_id": "a", "nll_sum": None, "tokens": 10}
    broken = {"doc_id": "b", "nll_sum": None, "tokens": 10, "error": "10 NaN of 10 scored tokens"}
    assert combine_cell(BASE, [infinite], CONTEXT).status == "inf"
    cell = combine_cell(BASE, [infinite, broken], CONTEXT)
    assert cell.status == "error" and cell.n == 20 and cell.detail["error"].startswith("1 of 2 documents")


def test_a_server_answering_token_ids_outside_the_vocabulary_is_one_line(
    tmp_path, capsys, served_model, tiny_llama_bos_dir
):
    def foreign_ids(route, status, body):
        if route == "/v1/completions":
            for choice in body["choices"]:
                choice["logprobs"]["tokens"] = ["token_id:99999" for _ in choice["logprobs"]["tokens"]]
        return status, body

    args = ["passkey", "--model", tiny_llama_bos_dir, "--lengths", "200", "--samples", "2"]
    with FakeServer(served_model, "tiny", rewrite=foreign_ids) as url:
        result = invoke(capsys, *args, "--max-new-tokens", "6", "--output", tmp_path / "run.json",
                        "--backend", "openai", "--base-url", url)  # fmt: skip
    assert_error_after_progress(result, 2, f"server {url} answered token id 99999, outside the vocabulary")
    assert not (tmp_path / "run.json").exists()


@pytest.mark.parametrize("task", ["passkey", "ruler"])
def test_an_answer_read_from_nan_logits_is_an_error_cell_not_a_wrong_score(
    task, tmp_path, capsys, tiny_llama_bos_dir
):
    """A generation task on a model whose every position is NaN (BOS's embedding row, and BOS opens
    every prompt): no answer is decoded from NaN logits and scored 0; the cell is ``error`` and says
    where, and the run goes on to its next cell. The command then exits 2 naming the cell, as for any
    error cell, passkey as RULER."""
    nan_model = _nan_row_model(tiny_llama_bos_dir, tmp_path / "model", 0)
    out = tmp_path / "run.json"
    task_args = (
        ["--tasks", "niah_single_1", "--lengths", "528,608"] if task == "ruler" else ["--lengths", "230,300"]
    )
    args = [task, "--model", nan_model, "--samples", "2", "--bos", "always"]
    result = invoke(capsys, *args, *task_args, "--output", out)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "non-finite logits" in result.stderr.strip().splitlines()[-1]
    cells = json.loads(out.read_text())["cells"]
    assert [c["status"] for c in cells] == ["error", "error"]
    assert all(c["value"] is None and "non-finite logits" in c["detail"]["error"] for c in cells)


def _first_call_prompts(monkeypatch, capsys, args) -> list[list[int]]:
    """The prompts a healthy run's first greedy call sends to the hf backend (a cell's samples, in
    index order), watched on their way in."""
    from coca_eval.backends.hf import HFBackend

    seen, greedy = [], HFBackend.generate_greedy

    def watched(self, prompts, *rest, **options):
        seen.append([list(p) for p in prompts])
        return greedy(self, prompts, *rest, **options)

    monkeypatch.setattr(HFBackend, "generate_greedy", watched)
    result = invoke(capsys, *args)
    monkeypatch.setattr(HFBackend, "generate_greedy", greedy)
    assert result.returncode == 0, result.stderr[-2000:]
    return seen[0]


@pytest.mark.parametrize(
    ("task", "task_args", "where"),
    [("passkey", ["--lengths", "230"], "passkey @ 230"),
     ("ruler", ["--tasks", "niah_single_1", "--lengths", "528"], "niah_single_1 @ 528")],
)  # fmt: skip
def test_one_nan_prompt_fails_its_cell_by_name_and_keeps_the_other_answers(
    task, task_args, where, tmp_path, capsys, monkeypatch, tiny_llama_bos_dir
):
    """One prompt of three holds a token whose embedding row is NaN: that sample is named in the cell's
    error and the command's last line (exit 2, passkey as RULER), and the other two keep the answers the
    healthy model gives them, in the journal and in the error cell's samples."""
    options = ["--samples", "3", "--bos", "always", *task_args]
    healthy_out = tmp_path / "healthy.json"
    prompts = _first_call_prompts(
        monkeypatch, capsys, [task, "--model", tiny_llama_bos_dir, *options, "--output", healthy_out]
    )
    assert len(prompts) == 3
    holders = Counter(token for ids in prompts for token in set(ids))
    poisoned = max(i for i, ids in enumerate(prompts) if any(holders[t] == 1 for t in ids))
    token = next(t for t in prompts[poisoned] if holders[t] == 1)
    others = [i for i in range(3) if i != poisoned]
    (healthy,) = json.loads(healthy_out.read_text())["cells"]
    expected = {s["index"]: s["output"] for s in healthy["detail"]["samples"] if s["index"] in others}

    nan_model = _nan_row_model(tiny_llama_bos_dir, tmp_path / "model", token)
    out = tmp_path / "run.json"
    result = invoke(capsys, task, "--model", nan_model, *options, "--output", out)
    assert result.returncode == 2, result.stderr[-2000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"coca-eval: error: {where}: sample {poisoned}: non-finite logits"), last
    (cell,) = json.loads(out.read_text())["cells"]
    assert cell["status"] == "error" and cell["value"] is None
    assert cell["detail"]["error"].startswith(f"sample {poisoned}: non-finite logits")
    assert {s["index"]: s["output"] for s in cell["detail"]["samples"]} == expected
    parts = [e for e in journal_entries(out.with_name("run.journal.jsonl")) if e["kind"] == "part"]
    assert {int(e["part"]): e["data"]["output"] for e in parts} == expected


def test_a_server_answering_from_nan_logits_gives_an_error_cell(tmp_path, capsys, tiny_llama_bos_dir):
    """The same model behind an OpenAI-compatible server: the answer tokens' log-probs are NaN, so the
    passkey cell is ``error`` naming the server and the token, not ``ok`` at 0 accuracy."""
    import torch
    from transformers import AutoModelForCausalLM

    nan_dir = _nan_row_model(tiny_llama_bos_dir, tmp_path / "model", 0)
    served = AutoModelForCausalLM.from_pretrained(nan_dir, dtype=torch.float32).eval()
    out = tmp_path / "run.json"
    args = ["passkey", "--model", tiny_llama_bos_dir, "--lengths", "230", "--samples", "2", "--bos", "always"]
    with FakeServer(served, "tiny") as url:
        result = invoke(capsys, *args, "--max-new-tokens", "4", "--backend", "openai", "--base-url", url,
                        "--output", out)  # fmt: skip
    assert result.returncode == 2, result.stderr[-2000:]
    assert "answer token 1 has log-prob nan" in result.stderr.strip().splitlines()[-1]
    (cell,) = json.loads(out.read_text())["cells"]
    assert cell["status"] == "error" and "answer token 1 has log-prob nan" in cell["detail"]["error"]
