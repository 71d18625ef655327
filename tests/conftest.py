"""Shared fixtures: tiny random models with real tokenizers, built in the test (no downloads)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# In several worker processes (pytest -n N), each takes its share of the cores, so N processes never run
# more threads than there are cores (oversubscribed, torch's threads wait on each other). The model
# outputs the tests compare do not depend on the thread count (matmul splits rows, not sums, by thread).
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _threads = max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    os.environ["OMP_NUM_THREADS"] = str(_threads)  # the CLI processes the tests start
    torch.set_num_threads(_threads)

from bare_runs import BareRuns  # noqa: E402
from plugin_metadata import declare_missing_plugins  # noqa: E402
from tiny_models import make_sharp_llama, make_tiny_llama, tiny_corpus_text  # noqa: E402

from coca_eval import plugins  # noqa: E402
from coca_eval.models.registration import register_model_types  # noqa: E402

register_model_types()  # tests load CoCA checkpoints with transformers' Auto classes directly

# The plug-ins pyproject.toml declares (the zoo) load in every test, installed metadata current or not;
# loading them now fills the registries once, before a test swaps in plug-ins of its own.
declare_missing_plugins()
plugins.load_plugins()

# `gpu` tests run on this device: CUDA normally (skipped where there is none); set to ``cpu`` to run the
# GPU suite's logic on a CPU machine (tests that need CUDA itself still skip), e.g. before a GPU run.
GPU_DEVICE = os.environ.get("COCA_EVAL_GPU_DEVICE", "cuda")


def pytest_collection_modifyitems(config, items):
    """``gpu`` tests skip cleanly without CUDA (never fail on a CPU machine). In the CPU dry run their
    ids say ``cpu-dry-run`` and they carry the ``cpu_dry_run`` marker: there they compare CPU with CPU,
    so they must not be read (or counted) as CUDA checks."""
    import torch

    if GPU_DEVICE != "cuda":
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(pytest.mark.cpu_dry_run)
        return
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA (set COCA_EVAL_GPU_DEVICE=cpu to dry-run on CPU)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    """Counted apart from behaviour tests: CUDA tests run on CPU, and the committed-JSON load checks."""
    for marker, what in (
        ("cpu_dry_run", "gpu tests ran as CPU dry runs (CPU compared with CPU, not CUDA)"),
        ("committed_data", "passed tests only read committed data (not behaviour tests)"),
    ):
        reports = [r for r in terminalreporter.stats.get("passed", []) if marker in r.keywords]
        if reports:
            terminalreporter.write_line(f"{len(reports)} {what} [-m {marker}]")


@pytest.fixture(scope="session", params=[GPU_DEVICE], ids=["cuda" if GPU_DEVICE == "cuda" else "cpu-dry-run"])
def gpu_device(request) -> str:
    """Where ``gpu`` tests run (see GPU_DEVICE). Every ``gpu`` test uses it, so its id names the device:
    ``[...-cpu-dry-run]`` in the dry run, where a "CUDA against CPU" check compares CPU with CPU."""
    return request.param


@pytest.fixture
def cuda_only(gpu_device) -> None:
    """For checks that need CUDA itself (its allocator statistics, its kernels)."""
    if gpu_device != "cuda":
        pytest.skip("needs CUDA itself, not a dry run")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Journals and caches of one test never leak into another (real-model assets keep their cache)."""
    if "COCA_EVAL_CACHE_KEEP" not in os.environ:
        monkeypatch.setenv("COCA_EVAL_JOURNAL_DIR", str(tmp_path_factory.mktemp("journals")))


@pytest.fixture(autouse=True)
def _fresh_consoles():
    """The CLI's consoles are made once per process and keep the width ``COLUMNS`` had then: each test
    gets new ones, so a test that sets ``COLUMNS`` sees its own width whatever ran before it in the same
    process (the suite runs in several processes, in an order that varies)."""
    from coca_eval.cli import output

    output.stdout.cache_clear()
    output.stderr.cache_clear()
    yield
    output.stdout.cache_clear()
    output.stderr.cache_clear()


@pytest.fixture
def ruler_builds(monkeypatch) -> list:
    """Every RULER sample a run builds, in order (a loopback server looks a rendered prompt up in them)."""
    from coca_eval.ruler.prompts import RulerPromptBuilder

    samples, build = [], RulerPromptBuilder.build

    def recording(self, task, length, count, seed, prompt_length=None):
        samples.extend(build(self, task, length, count, seed, prompt_length))
        return samples[-count:]

    monkeypatch.setattr(RulerPromptBuilder, "build", recording)
    return samples


@pytest.fixture(scope="session")
def bare_run(tmp_path_factory) -> BareRuns:
    """``bare_run("ruler")``: a bare ``coca-eval ruler`` (its default preset), made once per session
    (and once for all worker processes: their temporary folders share a parent)."""
    shared = tmp_path_factory.getbasetemp().parent if os.environ.get("PYTEST_XDIST_WORKER") else None
    return BareRuns(tmp_path_factory.mktemp, shared)


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> Path:
    """LLaMA-style model whose tokenizer adds no BOS (like SmolLM2)."""
    return make_tiny_llama(tmp_path_factory.mktemp("tiny-llama"), add_bos=False)


@pytest.fixture(scope="session")
def tiny_chat_dir(tiny_llama_dir, tmp_path_factory) -> Path:
    """The tiny model (no BOS) with a chat template of its own: ``### role:`` lines (SIMPLE_TEMPLATE)."""
    import shutil

    from transformers import AutoTokenizer

    from tests.ruler.conftest import SIMPLE_TEMPLATE

    folder = tmp_path_factory.mktemp("chat-model") / "tiny-chat"
    shutil.copytree(tiny_llama_dir, folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = SIMPLE_TEMPLATE
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_llama_bos_dir(tmp_path_factory) -> Path:
    """LLaMA-style model whose tokenizer adds BOS (like LLaMA and Gemma)."""
    return make_tiny_llama(tmp_path_factory.mktemp("tiny-llama-bos"), add_bos=True)


@pytest.fixture(scope="session")
def sharp_llama_dir(tmp_path_factory) -> Path:
    """A model whose answers move with the rotary scaling: held and rescaled dynamic rope answer apart."""
    return make_sharp_llama(tmp_path_factory.mktemp("sharp-llama"))


@pytest.fixture(scope="module")
def served_model(tiny_llama_bos_dir):
    """The tiny BOS model that the fake OpenAI-compatible servers answer with."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_llama_bos_dir, dtype=torch.float32).eval()


@pytest.fixture
def prefix_route_always(monkeypatch) -> None:
    """Every row with a shared prefix takes the shared-prefix route: the cost estimate is made to see
    attention as free, so a tiny model's short prompts exercise the route they would not pay for."""
    from coca_eval.backends.prefix_route import PrefillCost

    monkeypatch.setattr(PrefillCost, "of", classmethod(lambda cls, model: cls(1.0, 0.0)))


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """The OpenAI client's backoff waits, recorded instead of slept."""
    waits: list[float] = []
    monkeypatch.setattr("coca_eval.backends.openai_client._wait", waits.append)
    return waits


@pytest.fixture(scope="session")
def corpus_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "books.jsonl"
    import json

    texts = tiny_corpus_text()
    path.write_text("".join(json.dumps({"text": t, "title": f"doc{i}"}) + "\n" for i, t in enumerate(texts)))
    return path
