"""vLLM's parallel sizes and executor: checked, passed to ``LLM(...)``, recorded, and kept out of the
cell keys. A stand-in ``vllm`` (:mod:`fake_vllm`) takes the engine's place, so no engine starts."""

from __future__ import annotations

import importlib.util
import json

import fake_vllm
import pytest
from test_gate_cli import invoke

from coca_eval.backends.local import load_local_side
from coca_eval.backends.options import EngineOptions
from coca_eval.backends.vllm import VllmBackend
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method

QUICK = ["--lengths", "32", "--stride", "32", "--doc-tokens", "128", "--num-docs", "2"]
PARALLEL = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")


def _backend(model_dir, options: EngineOptions) -> VllmBackend:
    method = make_method(str(model_dir), "none", None, "float32", "vllm")
    return VllmBackend(method, load_local_side(str(model_dir)), options, 64)


def test_the_engine_gets_the_sizes_and_the_executor(monkeypatch, tiny_llama_dir):
    engine = fake_vllm.install(monkeypatch)
    options = EngineOptions(
        tensor_parallel_size=8,
        pipeline_parallel_size=2,
        data_parallel_size=1,
        distributed_executor_backend="ray",
    )
    backend = _backend(tiny_llama_dir, options)
    backend.engine(40)
    started = engine.started[-1]
    assert [started[name] for name in PARALLEL] == [8, 2, 1]
    assert started["distributed_executor_backend"] == "ray"
    assert {name: backend.metadata["engine"][name] for name in PARALLEL} == dict(
        zip(PARALLEL, [8, 2, 1], strict=True)
    )
    backend.close()
    _backend(tiny_llama_dir, EngineOptions()).engine(40)
    assert "distributed_executor_backend" not in engine.started[-1]  # left out: vLLM picks


def test_an_engine_setting_vllm_refuses_is_one_line(monkeypatch, tiny_llama_dir):
    engine = fake_vllm.install(monkeypatch)
    engine.refuse = True
    with pytest.raises(CocaEvalError) as caught:
        _backend(tiny_llama_dir, EngineOptions(data_parallel_size=2)).engine(40)
    message = str(caught.value)
    assert message.startswith("vLLM refused the engine settings: LLM(data_parallel_size=2) is not supported")
    assert "\n" not in message and engine.started[-1]["data_parallel_size"] == 2


def _ppl(capsys, model_dir, corpus_file, output, *extra):
    args = ["ppl", "--model", model_dir, "--dataset", corpus_file, *QUICK, "--output", output]
    return invoke(capsys, *args, "--backend", "vllm", *extra)


def test_sizes_reach_the_engine_and_the_record_but_not_the_cell_keys(
    monkeypatch, capsys, tiny_llama_dir, corpus_file, tmp_path
):
    engine = fake_vllm.install(monkeypatch)
    out = tmp_path / "run.json"
    laid_out = ["--tensor-parallel-size", "2", "--pipeline-parallel-size", "3"]
    first = _ppl(capsys, tiny_llama_dir, corpus_file, out, *laid_out, "--distributed-executor-backend", "mp")
    assert first.returncode == 0, first.stderr[-2000:]
    assert len(engine.started) == 1
    assert [engine.started[0][name] for name in PARALLEL] == [2, 3, 1]
    assert engine.started[0]["distributed_executor_backend"] == "mp"
    run = json.loads(out.read_text())
    assert [cell["status"] for cell in run["cells"]] == ["ok"] and run["cells"][0]["n"] > 0
    recorded = run["config"]["engine"]
    assert [recorded[name] for name in PARALLEL] == [2, 3, 1]
    assert recorded["distributed_executor_backend"] == "mp"
    # other sizes, the same journal: every cell is reused, no engine starts, the numbers stay
    again = _ppl(capsys, tiny_llama_dir, corpus_file, out, "--pipeline-parallel-size", "4")
    assert again.returncode == 0, again.stderr[-2000:]
    assert len(engine.started) == 1
    rerun = json.loads(out.read_text())
    assert rerun["cells"] == run["cells"] and rerun["config"]["engine"]["pipeline_parallel_size"] == 4


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--pipeline-parallel-size", "0", "--pipeline-parallel-size must be a positive integer (got 0)"),
        ("--data-parallel-size", "-1", "--data-parallel-size must be a positive integer (got -1)"),
        ("--data-parallel-size", "two", "'two' is not a valid integer"),
        ("--distributed-executor-backend", "slurm", "'slurm' is not one of 'mp', 'ray'"),
    ],
)
def test_bad_parallel_options_are_one_line(
    monkeypatch, capsys, tiny_llama_dir, tmp_path, option, value, message
):
    engine = fake_vllm.install(monkeypatch)
    args = ["passkey", "--model", tiny_llama_dir, "--backend", "vllm", "--output", tmp_path / "o" / "x.json"]
    result = invoke(capsys, *args, option, value)
    assert result.returncode == 2 and result.stderr.startswith("coca-eval: error:")
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert not engine.started and not (tmp_path / "o").exists()


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed here")
def test_the_ray_executor_without_ray_is_one_line(monkeypatch, capsys, tiny_llama_dir, tmp_path):
    engine = fake_vllm.install(monkeypatch)
    args = ["passkey", "--model", tiny_llama_dir, "--backend", "vllm", "--output", tmp_path / "o" / "x.json"]
    result = invoke(capsys, *args, "--distributed-executor-backend", "ray")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "--distributed-executor-backend ray needs Ray: `pip install ray`" in result.stderr
    assert not engine.started and not (tmp_path / "o").exists()
