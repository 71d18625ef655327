"""Issue 38 item 7: a checkpoint that asks for custom code never gets it run, nor a prompt.

A ``config.json`` with an ``auto_map`` and a model type transformers does not know reached its
interactive "run custom code? [y/N]" prompt (a run on a terminal waited there). Every
``from_pretrained`` now says ``trust_remote_code=False``: the load is one line, and the code never runs.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
from fault_cli import assert_error_after_progress
from test_gate_cli import invoke

from tests.backends.fake_completions import FakeServer

PACKAGE = Path(__file__).resolve().parents[2] / "coca_eval"
NO_CUSTOM_CODE = ("Generation",)  # GenerationConfig reads JSON only; it has no code to run


@pytest.fixture
def custom_code_model(tmp_path, tiny_llama_dir):
    model = tmp_path / "custom"
    shutil.copytree(tiny_llama_dir, model)
    config = json.loads((model / "config.json").read_text())
    config["model_type"] = "custom_llama"
    config["auto_map"] = {
        "AutoConfig": "configuration_custom.CustomConfig",
        "AutoModelForCausalLM": "modeling_custom.CustomForCausalLM",
    }
    (model / "config.json").write_text(json.dumps(config))
    ran = tmp_path / "custom-code-ran"
    (model / "configuration_custom.py").write_text(
        f"open({str(ran)!r}, 'w').close()\n"
        "from transformers import LlamaConfig\n\n\n"
        "class CustomConfig(LlamaConfig):\n    model_type = 'custom_llama'\n"
    )
    return model, ran


@pytest.mark.parametrize("backend", ["hf", "openai"])
def test_a_checkpoint_asking_for_custom_code_is_one_line_without_a_prompt(
    tmp_path, capsys, corpus_file, custom_code_model, served_model, backend
):
    model, ran = custom_code_model
    args = ["ppl", "--model", model, "--dataset", corpus_file, "--lengths", "32", "--num-docs", "1"]
    args += ["--doc-tokens", "64", "--output", tmp_path / "run.json", "--backend", backend]
    with FakeServer(served_model, "tiny") as url:  # the openai backend loads the tokenizer here
        result = invoke(capsys, *args, *(["--base-url", url] if backend == "openai" else []))
    assert_error_after_progress(result, 2, f"cannot load model {str(model)!r}", "contains custom code")
    assert "[y/N]" not in result.stdout + result.stderr
    assert not ran.exists()


def _from_pretrained_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "from_pretrained":
            yield node


def test_every_from_pretrained_in_the_package_refuses_custom_code():
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for call in _from_pretrained_calls(ast.parse(path.read_text(encoding="utf-8"))):
            owner = ast.unparse(call.func.value)
            if owner.startswith(NO_CUSTOM_CODE):
                continue
            passed = {k.arg: k.value for k in call.keywords}
            refused = isinstance(passed.get("trust_remote_code"), ast.Constant)
            if not refused or passed["trust_remote_code"].value is not False:
                missing.append(f"{path.relative_to(PACKAGE.parent)}:{call.lineno} {owner}.from_pretrained")
    assert not missing, missing
