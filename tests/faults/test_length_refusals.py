"""``--lengths 4,096`` ran the lengths 4 and 96 (ppl printed both columns and exited 0, passkey made two
error cells): a thousands separator, a part with a leading zero, or a length below what the task can
build is refused in one line, exit 2, by every command that takes ``--lengths``, before any model loads
(the model named here does not exist, so a run that got as far as loading one would say so instead)."""

from __future__ import annotations

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import parse_lengths

MISSING = "/no/such/model-dir"  # a command that loaded a model would fail on this, not on the lengths
COMMANDS = {
    "ppl": ["ppl", "--num-docs", "1", "--doc-tokens", "128"],
    "longppl": ["ppl", "--metric", "longppl", "--num-docs", "1", "--doc-tokens", "128"],
    "passkey": ["passkey", "--samples", "2"],
    "ruler": ["ruler", "--tasks", "niah_single_1", "--samples", "2", "--chat-template", "none"],
    "helmet": ["helmet", "--tasks", "json_kv", "--samples", "2"],
    "babilong": ["babilong", "--samples", "2"],
    "decay": ["analyze", "decay"],
}


@pytest.mark.parametrize(
    ("text", "meant"),
    [("4,096", "4096"), ("32,768", "32768"), ("8,192", "8192"), ("1,048,576", "1048576"),
     ("16,384,1k", "16384"), ("1k,131,072", "131072"), ("2,048..8k", "2048")],
)  # fmt: skip
def test_thousands_separators_are_refused_with_the_number_meant(text, meant):
    with pytest.raises(CocaEvalError, match=f"did you mean {meant}\\?"):
        parse_lengths(text)


@pytest.mark.parametrize(
    ("text", "meant"), [("096", "96"), ("512,0128", "128"), ("01k", "1k"), ("1k..08k", "8k")]
)
def test_a_leading_zero_is_refused(text, meant):
    with pytest.raises(CocaEvalError, match=f"leading zero; did you mean {meant}\\?"):
        parse_lengths(text)


@pytest.mark.parametrize(
    ("text", "lengths"),
    [("64,128", [64, 128]), ("32,64,128", [32, 64, 128]), ("230,300", [230, 300]), ("40,600", [40, 600]),
     ("128,512", [128, 512]), ("64,512", [64, 512]), ("512,768", [512, 768])],
)  # fmt: skip
def test_lists_of_short_lengths_stay_lists(text, lengths):
    """Parts that joined make no usual context size (64512 is 63k) are what they say: several lengths."""
    assert parse_lengths(text) == lengths


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_refuses_a_thousands_separator(capsys, tmp_path, command):
    out = tmp_path / "run.json"
    result = invoke(capsys, *COMMANDS[command], "--model", MISSING, "--lengths", "4,096", "--output", out)
    assert_one_line_error(result, 2, "'4,096' read as the lengths 4 and 96", "did you mean 4096?")
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "length", "shortest"),
    [
        ("ppl", "1", "2 tokens"),
        ("longppl", "1", "2 tokens"),
        ("decay", "1", "2 tokens"),
        # the landmark template's intro, key line and question are 47 words
        ("passkey", "40", "48 tokens"),
        # niah_single_1: 49 words of template and answer prefix, 128 tokens of answer budget, 1 of haystack
        ("ruler", "96", "178 tokens"),
        ("helmet", "96", "101 tokens"),  # json_kv's answer budget is 100 tokens
        ("babilong", "200", "231 tokens"),  # qa3's template and worked examples are 210 words, budget 20
    ],
)
def test_every_command_refuses_a_length_below_what_it_can_build(capsys, tmp_path, command, length, shortest):
    out = tmp_path / "run.json"
    result = invoke(
        capsys, *COMMANDS[command], "--model", MISSING, "--lengths", f"{length},4k", "--output", out
    )
    err = assert_one_line_error(result, 2, f"length {length} is below the shortest", shortest)
    assert f"did you mean {length}k?" in err
    assert not out.exists()
