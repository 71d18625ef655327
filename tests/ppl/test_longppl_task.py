"""``ppl --metric longppl`` cells: they equal the library function, resume from the journal, merge from
shards, share an evaluator's key spans between methods and reuse a results file's; bad input is one
line, exit 2."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from forked_cli import run_cli
from tiny_models import make_tiny_llama

from coca_eval.api import Runtime, evaluate
from coca_eval.backends.hf import load_hf_backend
from coca_eval.data.sampling import sample_documents
from coca_eval.data.sources import load_documents
from coca_eval.distributed.merge import merge_shard_files
from coca_eval.distributed.partition import Partition
from coca_eval.distributed.share import WHOLE, ShardShare
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from coca_eval.ppl.longppl.keys import KeyTokenRule, find_key_spans, score_on_spans, tokenize_with_offsets
from coca_eval.ppl.longppl.params import make_longppl_params
from coca_eval.ppl.longppl.task import combine_longppl_cell
from coca_eval.results import load_run

ROOT = Path(__file__).resolve().parents[2]
RULE = {"short": 24, "step": 10, "bound": 6.0, "margin": 0.02}  # random tiny models: no loss below 2


@pytest.fixture(scope="module")
def evaluator_dir(tmp_path_factory) -> Path:
    """Another tiny model (other weights, a tokenizer that adds BOS) to judge the key tokens."""
    return make_tiny_llama(tmp_path_factory.mktemp("evaluator"), add_bos=True, seed=3)


def _params(corpus: Path, **extra):
    values = {"dataset": str(corpus), "num_docs": 3, "doc_tokens": 128, "lengths": "48,96", **RULE, **extra}
    return make_longppl_params(values)


def _run(output, model, corpus, rope="none", shard=None, **extra):
    share = WHOLE if shard is None else ShardShare(Partition(*shard))
    method = make_method(str(model), rope, None, "float32", "hf")
    return evaluate("longppl", [method], _params(corpus, **extra), output, Runtime(share=share))


def _cells(run):
    return [cell.model_dump() for cell in run.cells]


def _parts(journal: Path) -> list[tuple[str, str]]:
    entries = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    return [(e["key"], e["part"]) for e in entries if e["kind"] == "part"]


def test_cells_equal_the_library_function_with_another_evaluator(
    tmp_path, tiny_llama_dir, evaluator_dir, corpus_file
):
    run = _run(tmp_path / "out.json", tiny_llama_dir, corpus_file, evaluator_model=str(evaluator_dir))
    assert [c.status for c in run.cells] == ["ok", "ok"]
    evaluated = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    evaluator = load_hf_backend(make_method(str(evaluator_dir), "none", None, "float32", "hf"))
    rule = KeyTokenRule(**RULE)
    docs = sample_documents(load_documents(str(corpus_file), "text"), evaluated.encode, 3, 128, 0)
    for cell in run.cells:
        key_nll = keys = 0.0
        for part, doc in zip(cell.detail["docs"], docs, strict=True):
            assert part["doc_id"] == doc.doc_id
            ids = doc.ids[: cell.length]
            text = evaluated.tokenizer.decode(ids, skip_special_tokens=True)
            spans = find_key_spans(evaluator, text, rule, bos=True)  # its tokenizer adds BOS: --bos auto
            assert part["spans"] == [list(s) for s in spans] and spans
            score = score_on_spans(evaluated, text, spans, bos=False)
            assert part["key_tokens"] == score.key_tokens and part["tokens"] == score.tokens
            key_nll, keys = key_nll + score.key_nll_sum, keys + score.key_tokens
        assert cell.n == keys and 0 < keys < cell.detail["tokens"]
        assert cell.value == pytest.approx(math.exp(key_nll / keys), rel=1e-12)
        assert cell.detail["evaluator"] == str(evaluator_dir)


def test_resume_recomputes_no_document(tmp_path, tiny_llama_dir, corpus_file):
    out = tmp_path / "out.json"
    first = _run(out, tiny_llama_dir, corpus_file)
    journal = out.with_suffix(".journal.jsonl")
    kept = [line for line in journal.read_text().splitlines() if json.loads(line)["kind"] == "part"]
    journal.write_text("\n".join(kept[:4]) + "\n")  # killed after four documents
    out.unlink()
    again = _run(out, tiny_llama_dir, corpus_file)
    assert _cells(again) == _cells(first)
    parts = _parts(journal)
    assert parts[:4] == [(json.loads(k)["key"], json.loads(k)["part"]) for k in kept[:4]]
    assert len(parts) == len(set(parts)) == 6  # 3 documents x 2 lengths, none twice


def test_shards_merge_to_the_unsplit_run(tmp_path, tiny_llama_dir, corpus_file):
    whole = _run(tmp_path / "whole.json", tiny_llama_dir, corpus_file)
    paths = [tmp_path / f"s{k}.json" for k in (1, 2)]
    for k, path in enumerate(paths, start=1):
        _run(path, tiny_llama_dir, corpus_file, shard=(k - 1, 2))
    assert all(c.status == "partial" for c in load_run(paths[0]).cells)
    assert _cells(merge_shard_files(paths)) == _cells(whole)


def test_shards_scored_on_other_key_tokens_of_one_path_do_not_merge(
    tmp_path, tiny_llama_dir, evaluator_dir, corpus_file
):
    """``--key-tokens`` names a file by path: shard 1 scored on it, the file rewritten (another
    evaluator's spans), shard 2 on the new content; merge refuses the pair by the files' content."""
    keys = tmp_path / "keys.json"
    _run(keys, tiny_llama_dir, corpus_file, evaluator_model=str(evaluator_dir))
    paths = [tmp_path / f"s{k}.json" for k in (1, 2)]
    _run(paths[0], tiny_llama_dir, corpus_file, shard=(0, 2), key_tokens=str(keys))
    keys.unlink()
    _run(keys, tiny_llama_dir, corpus_file)  # self-judged: other key tokens, same path
    _run(paths[1], tiny_llama_dir, corpus_file, shard=(1, 2), key_tokens=str(keys))
    with pytest.raises(CocaEvalError, match="key_tokens_content"):
        merge_shard_files(paths)


def test_a_second_model_scores_on_the_stored_key_tokens(tmp_path, tiny_llama_dir, evaluator_dir, corpus_file):
    """The paper's protocol: key tokens found once (here by the evaluator) score another model later."""
    first = _run(tmp_path / "a.json", tiny_llama_dir, corpus_file, evaluator_model=str(evaluator_dir))
    second = _run(tmp_path / "b.json", evaluator_dir, corpus_file, key_tokens=str(tmp_path / "a.json"))
    for a, b in zip(first.cells, second.cells, strict=True):
        assert [d["spans"] for d in a.detail["docs"]] == [d["spans"] for d in b.detail["docs"]]
        assert b.status == "ok" and b.value != a.value  # another model, with BOS, on the same key tokens
        assert b.detail["bos"] == "always" and b.detail["key_tokens_from"] == str(tmp_path / "a.json")


def test_stored_key_tokens_include_a_length_without_any(tmp_path, tiny_llama_dir, evaluator_dir, corpus_file):
    """At L = 16, within the short context, no token is key: that cell is an error cell, yet its empty
    key-token set is stored and scores the second model too (whose cells then pair with the first's)."""
    first = _run(tmp_path / "a.json", tiny_llama_dir, corpus_file, lengths="16,96")
    second = _run(
        tmp_path / "b.json", evaluator_dir, corpus_file, lengths="16,96", key_tokens=str(tmp_path / "a.json")
    )
    assert [c.status for c in first.cells] == [c.status for c in second.cells] == ["error", "ok"]
    assert second.cells[0].n == 0 and all(d["spans"] == [] for d in second.cells[0].detail["docs"])


def test_an_evaluator_judges_once_for_every_method(tmp_path, tiny_llama_dir, evaluator_dir, corpus_file):
    methods = [make_method(str(tiny_llama_dir), rope, None, "float32", "hf") for rope in ("none", "linear:2")]
    params = _params(corpus_file, evaluator_model=str(evaluator_dir))
    out = tmp_path / "out.json"
    run = evaluate("longppl", methods, params, out, Runtime())
    by_length = {}
    for cell in run.cells:
        by_length.setdefault(cell.length, []).append([d["spans"] for d in cell.detail["docs"]])
    assert all(a == b for a, b in by_length.values())
    assert run.cells[0].value != run.cells[2].value  # two methods, one key-token set
    keys = {key for key, _ in _parts(out.with_suffix(".journal.jsonl"))}
    assert len(keys) == 2 * 2 + 2  # the four cells' parts, and the evaluator's spans once per length


def test_no_key_token_is_an_error_cell_not_a_value():
    part = {"doc_id": "d", "text_sha": "0", "spans": [], "key_tokens": 0, "key_nll_sum": 0.0, "tokens": 9,
            "nll_sum": 20.0}  # fmt: skip
    cell = combine_longppl_cell({"task": "longppl", "method": "m", "metric": "longppl", "length": 9}, [part],
                                {"short": 24, "bound": 2.0, "margin": 2.0})  # fmt: skip
    assert cell.status == "error" and cell.value is None and "no key tokens" in cell.detail["error"]


class _PythonTokenizer:
    """Like transformers' pure-Python tokenizers: no character offsets."""

    def __call__(self, text, **kwargs):
        if kwargs.get("return_offsets_mapping"):
            raise NotImplementedError("return_offset_mapping is not available when using Python tokenizers")
        return {"input_ids": [1, 2]}


def test_a_tokenizer_without_offsets_is_refused_in_one_line():
    with pytest.raises(CocaEvalError, match="cannot be aligned") as caught:
        tokenize_with_offsets(_PythonTokenizer(), "some text", False, "evaluator")
    assert "\n" not in str(caught.value)


def _cli(*args):
    return run_cli(*args, env={"PYTHONPATH": str(ROOT)})


@pytest.fixture(scope="module")
def byte_evaluator_dir(tmp_path_factory) -> Path:
    """A tiny LLaMA with ByT5's pure-Python byte tokenizer: it gives no offsets, so cannot be aligned."""
    from transformers import ByT5Tokenizer, LlamaConfig, LlamaForCausalLM

    directory = tmp_path_factory.mktemp("byt5-evaluator")
    tokenizer = ByT5Tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
    )  # fmt: skip
    LlamaForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.mark.parametrize(
    "extra",
    [
        ["--metric", "longppl", "--evaluator-model", "BYTE_EVALUATOR"],
        ["--metric", "longppl", "--stride", "16"],
        ["--metric", "longppl", "--mode", "sliding"],
        ["--metric", "longppl", "--longppl-margin", "nan"],
        ["--evaluator-model", "BYTE_EVALUATOR"],  # without --metric longppl
    ],
)
def test_bad_input_is_one_line_exit_2(extra, tmp_path, tiny_llama_dir, corpus_file, byte_evaluator_dir):
    out = tmp_path / "out.json"
    unaligned = extra[:2] == ["--metric", "longppl"] and "BYTE_EVALUATOR" in extra
    extra = [str(byte_evaluator_dir) if a == "BYTE_EVALUATOR" else a for a in extra]
    args = [
        "ppl",
        "--model",
        tiny_llama_dir,
        "--dataset",
        corpus_file,
        "--lengths",
        "48",
        "--doc-tokens",
        "128",
    ]
    result = _cli(*args, "--num-docs", "1", *extra, "--output", out)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("coca-eval: error:") and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr and not out.exists()
    if unaligned:
        assert "cannot be aligned" in result.stderr and "ByT5Tokenizer" in result.stderr


def _key_file(tmp_path, tiny_llama_dir, corpus_file) -> Path:
    path = tmp_path / "keys.json"
    _run(path, tiny_llama_dir, corpus_file)
    return path


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda raw: raw.update(cells={"a": 1}), "its cells are not a list of cells"),
        (lambda raw: raw.update(cells=[1, 2]), "its cells are not a list of cells"),
        (lambda raw: raw["cells"][1]["detail"]["docs"][0].update(spans=[[5, 1]]), "cells.1 has no valid key"),
        (lambda raw: raw["cells"][0]["detail"]["docs"][2].pop("text_sha"), r"cells.0 .*text_sha"),
        (lambda raw: raw["cells"][0].update(length="long"), "cells.0 has no valid key spans"),
    ],
)
def test_a_damaged_key_tokens_file_is_one_line_naming_it(
    tmp_path, tiny_llama_dir, corpus_file, damage, message
):
    from coca_eval.ppl.longppl.task import stored_key_spans

    path = _key_file(tmp_path, tiny_llama_dir, corpus_file)
    raw = json.loads(path.read_text())
    damage(raw)
    path.write_text(json.dumps(raw))
    with pytest.raises(CocaEvalError, match=message) as caught:
        stored_key_spans(str(path))
    assert str(caught.value).startswith(f"--key-tokens {path}: ") and "\n" not in str(caught.value)


def test_damaged_scores_beside_valid_spans_still_lend_the_spans(tmp_path, tiny_llama_dir, corpus_file):
    """Only the spans and their text are read from a --key-tokens file: a NaN NLL beside them (which no
    results file of ours holds, but another tool's might) does not block reusing them."""
    path = _key_file(tmp_path, tiny_llama_dir, corpus_file)
    text = path.read_text()
    raw = json.loads(text)
    for cell in raw["cells"]:
        for doc in cell["detail"]["docs"]:
            doc["key_nll_sum"] = float("nan")
    path.write_text(json.dumps(raw))  # NaN as JSON's NaN token
    second = _run(tmp_path / "b.json", tiny_llama_dir, corpus_file, key_tokens=str(path))
    first = json.loads(text)
    assert [[d["spans"] for d in c.detail["docs"]] for c in second.cells] == [
        [d["spans"] for d in c["detail"]["docs"]] for c in first["cells"]
    ]


@pytest.mark.parametrize(("short", "step"), [(4, 2), (4, 3), (5, 1), (8, 8), (3, 10)])
def test_short_windows_predict_every_token_past_the_short_context_once(short, step):
    """Each token from ``short`` on is predicted by exactly one short window (whatever the total), and
    none before it: the windows' predicted ranges tile ``short .. total - 1``."""
    from coca_eval.ppl.longppl.keys import short_windows

    for total in range(1, 30):
        predicted = [
            t
            for start, end in short_windows(total, KeyTokenRule(short, step))
            for t in range(start + short, end)
        ]
        assert predicted == list(range(short, total)), (total, predicted)


class _FixedLosses:
    """A scoring backend whose every full-context NLL is ``full`` and every short-context one ``short``."""

    def __init__(self, full: float, short: float) -> None:
        self.full, self.short = full, short

    def score(self, input_ids, first_logit, targets):
        import torch

        value = self.full if first_logit == 0 else self.short
        return torch.full(targets.shape, value, dtype=torch.float32)


@pytest.mark.parametrize(
    ("rise", "bound", "keys"), [(0.5, 2.0, False), (0.75, 2.0, True), (0.75, 1.0, False)]
)
def test_a_key_token_rises_by_more_than_the_margin_below_the_bound(rise, bound, keys):
    """The rule is strict on both sides: a rise of exactly the margin (0.5) is not key, nor is a full-
    context loss of exactly the bound (1.0)."""
    from coca_eval.ppl.longppl.keys import key_token_positions

    rule = KeyTokenRule(short=4, step=2, bound=bound, margin=0.5)
    found = key_token_positions(_FixedLosses(1.0, 1.0 + rise), list(range(12)), rule)
    assert found == (list(range(4, 12)) if keys else [])


def _token_nll(model, ids: list[int]) -> list[float]:
    """NLL of ``ids[1:]`` from one plain transformers forward (no code of this project)."""
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    logp = torch.log_softmax(logits[:-1], dim=-1)
    return [-float(logp[k, ids[k + 1]]) for k in range(len(ids) - 1)]


def test_a_self_judged_cell_equals_longppl_computed_from_its_definition(
    tmp_path, tiny_llama_dir, corpus_file
):
    """LongPPL from the paper's definition, written out here on raw logits: token j is key when its
    loss with the full context is below ``bound`` and with the short context (the window of ``short``
    to ``short + step - 1`` tokens that the sliding short windows give it) more than ``margin`` higher;
    LongPPL = exp(mean full-context loss over the key tokens), over all documents. The model judges
    itself and its tokenizer round-trips the texts, so tokens and character spans coincide."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run = _run(tmp_path / "out.json", tiny_llama_dir, corpus_file)
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, torch_dtype="float32").eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_llama_dir)
    short, step, bound, margin = RULE["short"], RULE["step"], RULE["bound"], RULE["margin"]
    docs = sample_documents(
        load_documents(str(corpus_file), "text"),
        lambda t: tokenizer.encode(t, add_special_tokens=False),
        3,
        128,
        0,
    )
    for cell in run.cells:
        key_nll, keys = 0.0, 0
        for doc in docs:
            ids = doc.ids[: cell.length]
            text = tokenizer.decode(ids, skip_special_tokens=True)
            assert (
                tokenizer.encode(text, add_special_tokens=False) == ids
            )  # the round trip the docstring relies on
            full = _token_nll(model, ids)  # full[j - 1]: token j
            for j in range(short, len(ids)):
                start = (j - short) // step * step  # the short window that predicts token j
                shorter = _token_nll(model, ids[start : j + 1])[-1]
                if full[j - 1] < bound and shorter - full[j - 1] > margin:
                    key_nll, keys = key_nll + full[j - 1], keys + 1
        assert cell.n == keys > 0
        assert cell.value == pytest.approx(math.exp(key_nll / keys), rel=1e-4)
