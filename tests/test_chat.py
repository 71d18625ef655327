"""Chat frames: the template's tokens around a user message, from a tokenizer's template or a file."""

from __future__ import annotations

import hashlib

import pytest
from tiny_models import make_tokenizer

from coca_eval.chat import chat_frame
from coca_eval.errors import CocaEvalError

SIMPLE = (
    "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}]:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}[assistant]:{% endif %}"
)


@pytest.fixture(scope="module")
def tokenizer():
    return make_tokenizer(add_bos=False)


def encode(tokenizer, text):
    return tokenizer(text, add_special_tokens=False).input_ids


def test_a_template_file_frames_the_message_as_the_rendered_text_tokenises(tokenizer, tmp_path):
    path = tmp_path / "simple.jinja"
    path.write_text(SIMPLE, encoding="utf-8")
    frame = chat_frame(str(path), tokenizer)
    assert frame.head == encode(tokenizer, "<s>[user]:\n") and frame.head[0] == tokenizer.bos_token_id
    assert frame.tail == encode(tokenizer, "\n[assistant]:")
    assert frame.digest == hashlib.sha256(SIMPLE.encode()).hexdigest()
    message = "the time was upon us"
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": message}],
        chat_template=SIMPLE,
        add_generation_prompt=True,
        tokenize=False,
    )
    assert rendered == "<s>[user]:\nthe time was upon us\n[assistant]:"
    assert frame.wrap(encode(tokenizer, message)) == encode(tokenizer, rendered)
    assert frame.wrap([7], [8, 9]) == [*frame.head, 7, *frame.tail, 8, 9]


def test_none_and_a_tokenizer_without_a_template_give_no_frame(tokenizer):
    assert tokenizer.chat_template is None
    assert chat_frame("none", tokenizer) is None and chat_frame("auto", tokenizer) is None


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("{% for m in messages %}{{ m['content'] }", "does not render: TemplateSyntaxError"),
        ("{{ raise_exception('no chat here') }}", "does not render: .*no chat here"),
        ("[user]: hello[assistant]:", "does not render the user's message exactly once"),
        ("{% for m in messages %}{{ m['content'] }}{% endfor %}", "renders nothing after the user's message"),
    ],
)
def test_a_template_that_cannot_frame_a_message_is_one_line(tokenizer, tmp_path, template, reason):
    path = tmp_path / "bad.jinja"
    path.write_text(template, encoding="utf-8")
    with pytest.raises(CocaEvalError, match=f"chat template {path} {reason}") as err:
        chat_frame(str(path), tokenizer)
    assert "\n" not in str(err.value)


def test_a_missing_template_file_is_one_line(tokenizer, tmp_path):
    with pytest.raises(
        CocaEvalError, match="cannot read chat template .*missing.jinja.*auto, none or a Jinja"
    ):
        chat_frame(str(tmp_path / "missing.jinja"), tokenizer)


@pytest.mark.realmodel
def test_smollm2_instruct_template_frames_the_user_turn():
    from transformers import AutoTokenizer

    from coca_eval.models.gguf import materialize_tokenizer
    from coca_eval.models.presets import SMOLLM2_135M

    tokenizer = AutoTokenizer.from_pretrained(materialize_tokenizer(SMOLLM2_135M))
    frame = chat_frame("auto", tokenizer)
    head = tokenizer.decode(frame.head)
    assert head.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert head.endswith("<|im_end|>\n<|im_start|>user\n")
    assert tokenizer.decode(frame.tail) == "<|im_end|>\n<|im_start|>assistant\n"
    im_start = tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert frame.head.count(im_start) == 2 and frame.tail.count(im_start) == 1  # special tokens, not text
    assert frame.digest == hashlib.sha256(tokenizer.chat_template.encode()).hexdigest()
