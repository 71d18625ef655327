"""``coca-eval ruler`` in-process on the scripted backend: its tables, and bad input as one line, exit 2."""

import json

import pytest

from coca_eval.cli import main

pytestmark = pytest.mark.usefixtures("scripted")


def _cli(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
        raise SystemExit(0)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


RUN = ("ruler", "--model", "zoo-rope", "--backend", "scripted", "--samples", "2", "--chat-template", "none")


def test_prints_tasks_by_lengths_with_the_average_and_both_effective_lengths(capsys, tmp_path):
    out_file = tmp_path / "r.json"
    code, out, err = _cli(capsys, *RUN, "--tasks", "niah_single_1,niah_multikey_2", "--lengths", "512,1k",
                          "--output", str(out_file))  # fmt: skip
    assert code == 0, err
    for text in ("niah_single_1", "niah_multikey_2", "Average", "95 % lower bound", "Effective (RULER)"):
        assert text in out
    assert "Effective length at 85.6: 1k (RULER, the average), <512 (ours" in out
    saved = json.loads(out_file.read_text())
    assert saved["config"]["effective_length"]["threshold"] == 85.6
    assert {c["dataset"] for c in saved["cells"]} == {"niah_single_1", "niah_multikey_2"}


def test_samples_auto_prints_its_rule_and_records_the_samples_spent(capsys, tmp_path):
    out_file = tmp_path / "r.json"
    auto = ("--samples", "auto", "--max-samples", "40", "--threshold", "50")
    code, out, err = _cli(capsys, *RUN[:5], *auto, *RUN[7:], "--tasks", "niah_single_1", "--lengths", "512",
                          "--output", str(out_file))  # fmt: skip
    assert code == 0, err
    heading = " ".join(out.split())  # the terminal wraps it
    assert (
        "up to 40 samples per task and length, stopping once the 95 % interval lies above or below 50"
        in heading
    )
    (cell,) = json.loads(out_file.read_text())["cells"]
    assert cell["n"] == cell["detail"]["sequential"]["samples_spent"] < 40


def test_a_length_below_the_fixed_parts_is_an_error_cell_and_one_line(capsys, tmp_path):
    """200 tokens pass the floor refused before any model loads (178: 49 words of template and answer
    prefix, 128 of answer budget, 1 of haystack), but zoo's tokenizer spends 162 on the fixed text."""
    out_file = tmp_path / "r.json"
    code, out, err = _cli(capsys, *RUN, "--tasks", "niah_single_1", "--lengths", "200,600",
                          "--output", str(out_file))  # fmt: skip
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert (
        last.startswith(
            "coca-eval: error: niah_single_1 @ 200: length 200 (72 prompt tokens + 128 answer) is too short"
        )
        and "Traceback" not in err
    )
    cells = json.loads(out_file.read_text())["cells"]
    assert [c["status"] for c in sorted(cells, key=lambda c: c["length"])] == ["error", "ok"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--tasks", "niah_single_9"), "unknown RULER task 'niah_single_9'"),
        (("--tasks", ","), "--tasks names no RULER task"),
        (("--haystack", "/no/such/books"), "--haystack /no/such/books: no such file or directory"),
        (("--threshold", "120"), "--threshold must be a score between 0 and 100"),
        (("--samples", "auto"), "--samples auto needs --max-samples"),
        (("--samples", "auto", "--max-samples", "50", "--target-width", "0.0"), "--target-width must be"),
        (("--samples", "20", "--max-samples", "50"), "--max-samples only apply with --samples auto"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, args, message):
    code, out, err = _cli(capsys, "ruler", *args)
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_a_chat_template_that_does_not_parse_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% if add_generation_prompt %}<|assistant|>", encoding="utf-8")
    for command in ("ruler", "passkey"):
        code, out, err = _cli(capsys, command, "--chat-template", str(bad))
        assert code == 2 and err.count("\n") == 1 and "is not a Jinja template" in err, err


def test_a_haystack_file_with_no_text_is_one_line(capsys, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    code, out, err = _cli(capsys, *RUN, "--tasks", "niah_single_2", "--haystack", str(empty),
                          "--output", str(tmp_path / "r.json"))  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "has no text" in err, err
