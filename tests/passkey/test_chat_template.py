"""``passkey --chat-template``: the default keeps every existing prompt and journal key; a template frames
the prompt inside its exact length with the answer's opening in the assistant's turn."""

from pathlib import Path
from types import SimpleNamespace

import pytest

import coca_eval
from coca_eval.errors import CocaEvalError
from coca_eval.journal import cell_key
from coca_eval.methods import MethodSpec
from coca_eval.passkey.params import chat_option, make_passkey_params
from coca_eval.passkey.prompts import PasskeySample, split_question
from coca_eval.passkey.spec import PASSKEY_TASK_VERSION
from coca_eval.passkey.task import PasskeyTask, prompt_builder

ZOO = Path(coca_eval.__file__).parent / "zoo" / "checkpoints" / "zoo-rope"
TURNS = (
    "{% for m in messages %}<|user|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture(scope="module")
def backend():
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(ZOO)
    return SimpleNamespace(
        tokenizer=tokenizer,
        adds_bos=False,
        bos_token_id=None,
        encode=lambda text: tokenizer(text, add_special_tokens=False).input_ids,
    )


def test_the_default_is_the_presets_choice():
    params = make_passkey_params({})
    assert "chat_template" not in params.identity()
    assert chat_option(params, "smollm2-135m") == "auto"
    assert chat_option(params, "zoo-rope") == chat_option(params, "/some/dir") == "none"
    assert chat_option(make_passkey_params({"chat_template": "none"}), "smollm2-135m") == "none"


def test_the_default_keeps_the_cell_keys_of_plain_readings():
    """A zoo or local model's key under the default is the one computed before the option existed."""
    params = make_passkey_params({"bos": "never"})
    method = MethodSpec(model="/models/base", label="base")
    before = {
        "task": "passkey",
        "version": PASSKEY_TASK_VERSION,
        "method": method.identity(),
        "weights": "w",
        "params": {**params.identity(), "lengths": None},
        "length": 512,
    }
    task = PasskeyTask(params, journal=None, progress=None)
    assert task.cell_key(method, "w", 512) == cell_key(before)
    smol = MethodSpec(model="smollm2-135m", label="smol")
    plain = PasskeyTask(make_passkey_params({"bos": "never", "chat_template": "none"}), None, None)
    assert task.cell_key(smol, "w", 512) != plain.cell_key(smol, "w", 512)


def test_the_default_prompt_is_unchanged(backend):
    params = make_passkey_params({})
    framed = prompt_builder(params, backend, "zoo-rope").build(PasskeySample(0, 12345, 0.5), 300)
    plain = prompt_builder(make_passkey_params({"chat_template": "none"}), backend).build(
        PasskeySample(0, 12345, 0.5), 300
    )
    assert framed == plain


def test_a_template_frames_the_prompt_within_its_length(backend, tmp_path):
    template = tmp_path / "turns.jinja"
    template.write_text(TURNS, encoding="utf-8")
    params = make_passkey_params({"chat_template": str(template)})
    builder = prompt_builder(params, backend, "zoo-rope")
    prompt = builder.build(PasskeySample(0, 12345, 0.5), 300)
    text = backend.tokenizer.decode(prompt.ids)
    assert len(prompt.ids) == 300
    assert text.startswith("<|user|>There is an important info")
    assert text.endswith("What is the pass key?<|end|><|assistant|>The pass key is")
    assert " The pass key is 12345. Remember it. 12345 is the pass key." in text
    assert prompt.shared_prefix == prompt.key_start
    assert "chat_template" in params.identity()


def test_split_question():
    assert split_question("What is the pass key? The pass key is") == (
        "What is the pass key?",
        "The pass key is",
    )
    assert split_question("What is the passkey?") == ("What is the passkey?", "")


def test_a_template_that_does_not_parse_is_one_line(tmp_path):
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% for m in messages %}{{ m['content'] }", encoding="utf-8")
    with pytest.raises(CocaEvalError, match="is not a Jinja template"):
        make_passkey_params({"chat_template": str(bad)})
    with pytest.raises(CocaEvalError, match="no such file"):
        make_passkey_params({"chat_template": str(tmp_path / "missing.jinja")})
