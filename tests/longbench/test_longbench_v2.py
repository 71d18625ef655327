"""``coca-eval longbench --version 2`` on LongBench v2's smoke set (its published layout): prompts as
v2's own ``pred.py`` builds them (``scripts/longbench_v2_prompt_ids.py``, run on THUDM/LongBench at
2e00731 outside this project, committed as tests/longbench/data), exact lengths, the answer letter
scored, LongBench v2's table, and malformed questions refused before any model loads."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli, main
from coca_eval.longbench.params import SMOKE_DIR
from coca_eval.longbench.v2_data import DOMAINS
from tests.longbench import longbench_oracle_backend

DATA = Path(__file__).parent / "data"
SMOKE = SMOKE_DIR / "v2" / "data.json"
QUESTIONS = json.loads(SMOKE.read_text(encoding="utf-8"))


def _invoke(tmp_path: Path, *args: str):
    longbench_oracle_backend.register()
    command = ["longbench", "--backend", "longbench-oracle", "--output", str(tmp_path / "run.json"), *args]
    return CliRunner().invoke(cli, command)


def _refusal(capsys, tmp_path: Path, *args: str) -> tuple[int, str]:
    """Exit code and stderr of a run on a model that does not exist: a refusal must come first."""
    command = [
        "longbench",
        "--model",
        str(tmp_path / "absent"),
        "--output",
        str(tmp_path / "run.json"),
        *args,
    ]
    with pytest.raises(SystemExit) as exit_info:
        main(command)
    err = capsys.readouterr().err
    assert "Traceback" not in err and not (tmp_path / "run.json").exists()
    assert len(err.strip().splitlines()) == 1, err
    return exit_info.value.code, err


def _dump(tmp_path: Path, *args: str) -> list[dict]:
    result = _invoke(tmp_path, "--dump-prompts", str(tmp_path / "prompts"), *args)
    assert result.exit_code == 0, result.output
    return [
        json.loads(line) for line in (tmp_path / "prompts" / "longbench_v2.jsonl").read_text().splitlines()
    ]


def _question_id(task: str, index: int) -> str:
    """The ``_id`` of a domain's ``index``-th question, read from the file with no project code."""
    return [q for q in QUESTIONS if q["domain"] == DOMAINS[task]][index]["_id"]


def _digest(ids: list[int]) -> dict:
    return {"tokens": len(ids), "sha256": hashlib.sha256(json.dumps(ids).encode()).hexdigest()}


@pytest.mark.parametrize(
    ("model", "expected", "template"),
    [
        ("zoo-rope", "v2_prompt_ids_zoo.json", str(DATA / "chat.jinja")),
        ("smollm2-135m", "v2_prompt_ids_smollm2.json", "auto"),
    ],
)
@pytest.mark.parametrize("chat", [True, False])
@pytest.mark.parametrize("context", ["document", "none"])
def test_published_prompts_are_the_ids_v2_pred_py_sends(tmp_path, model, expected, template, chat, context):
    from coca_eval.models.presets import resolve_model

    if not Path(resolve_model(model)[0]).is_dir():
        pytest.skip(f"{model} is not cached")
    theirs = json.loads((DATA / expected).read_text())["prompts"]
    theirs = {
        (p["_id"], p["max_len"]): p["chat" if chat else "plain"]
        for p in theirs
        if p["context"] == context and p["call"] == 0
    }
    rows = _dump(
        tmp_path, "--version", "2", "--model", model, "--data", "smoke", "--protocol", "longbench",
        "--context", context, "--lengths", "1001,3000", "--samples", "2",
        "--chat-template", template if chat else "none",
    )  # fmt: skip
    assert len(rows) == len(theirs) == len(DOMAINS) * 2 * 2
    for row in rows:
        reference = theirs[_question_id(row["task"], row["index"]), row["length"]]
        assert _digest(row["prompt_ids"]) == reference, (row["task"], row["index"], row["length"])


@pytest.mark.parametrize("template", ["none", str(DATA / "chat.jinja")])
def test_exact_prompts_are_n_minus_128_and_the_oracle_scores_every_question(tmp_path, template):
    rows = _dump(
        tmp_path, "--version", "2", "--model", "zoo-rope", "--lengths", "1k,2k", "--samples", "2",
        "--chat-template", template,
    )  # fmt: skip
    assert len(rows) == len(DOMAINS) * 2 * 2
    assert all(r["prompt_tokens"] == len(r["prompt_ids"]) == r["length"] - 128 for r in rows)
    assert all(r["answers"] == [QUESTIONS_BY_ID[_question_id(r["task"], r["index"])]["answer"]] for r in rows)
    run = json.loads((tmp_path / "run.json").read_text())
    cells = [c for c in run["cells"] if c["task"] == "longbench_v2"]
    assert {c["dataset"] for c in cells} == set(DOMAINS) and all(c["value"] == 100.0 for c in cells)
    samples = [s for c in cells for s in c["detail"]["samples"]]
    assert all(s["choice"] == QUESTIONS_BY_ID[s["_id"]]["answer"] for s in samples)
    assert {(s["difficulty"], s["length_class"]) for s in samples} == {
        (q["difficulty"], q["length"]) for q in QUESTIONS
    }


QUESTIONS_BY_ID = {q["_id"]: q for q in QUESTIONS}


def test_without_the_document_the_oracle_finds_no_letter_and_scores_zero(tmp_path):
    result = _invoke(
        tmp_path, "--version", "2", "--model", "zoo-rope", "--protocol", "longbench", "--context", "none",
        "--lengths", "1000", "--samples", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    cells = json.loads((tmp_path / "run.json").read_text())["cells"]
    assert cells and all(c["value"] == 0.0 for c in cells)
    assert all(s["choice"] is None for c in cells for s in c["detail"]["samples"])


def test_the_console_prints_v2s_table_by_difficulty_and_length_class(tmp_path):
    result = _invoke(tmp_path, "--version", "2", "--model", "zoo-rope", "--lengths", "1k", "--samples", "2")
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "Overall" in line)
    assert [w for w in header.replace("┃", " ").split()] == [
        "Length",
        "Overall",
        "Easy",
        "Hard",
        "Short",
        "Medium",
        "Long",
    ]
    row = next(line for line in result.output.splitlines() if line.startswith("│ 1k "))
    assert row.replace("│", " ").split() == ["1k", *["100.0"] * 6]


def test_a_v2_preset_chooses_version_2(tmp_path):
    result = _invoke(
        tmp_path, "--preset", "longbench-v2", "--model", "zoo-rope", "--data", "smoke", "--lengths", "1000",
        "--samples", "1", "--chat-template", str(DATA / "chat.jinja"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    cells = json.loads((tmp_path / "run.json").read_text())["cells"]
    assert {c["task"] for c in cells} == {"longbench_v2"} and len(cells) == len(DOMAINS)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--version", "2", "--context", "none"), "--context none (the question alone) has no document"),
        (("--version", "2", "--subset", "e"), "--subset is LongBench v1's option"),
        (("--context", "none"), "--context is LongBench v2's option"),
        (("--cot",), "--cot is LongBench v2's option"),
        (("--version", "2", "--tasks", "narrativeqa"), "unknown longbench_v2 task narrativeqa"),
    ],
)
def test_options_of_the_other_version_are_refused_in_one_line(tmp_path, capsys, args, message):
    code, err = _refusal(capsys, tmp_path, *args)
    assert code == 2 and message in " ".join(err.split()), err


def _broken(tmp_path: Path, change) -> Path:
    rows = [dict(q) for q in QUESTIONS]
    change(rows)
    path = tmp_path / "data.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rows: rows[3].pop("choice_C"), "row 3: missing column choice_C"),
        (lambda rows: rows[1].update(answer="E"), "row 1: answer: 'E' is not one of A, B, C, D"),
        (lambda rows: rows[2].update(answer="b"), "row 2: answer: 'b' is not one of A, B, C, D"),
        (lambda rows: rows[0].update(domain="Poetry"), "row 0: domain: 'Poetry' is not one of"),
        (
            lambda rows: rows[5].update(difficulty="medium"),
            "row 5: difficulty: 'medium' is not one of easy, hard",
        ),
        (
            lambda rows: rows[4].update(length="huge"),
            "row 4: length: 'huge' is not one of short, medium, long",
        ),
        (lambda rows: rows[6].update(question=None), "row 6: question: not text"),
        (lambda rows: rows.append(dict(rows[0])), "row 12: the same _id as"),
    ],
)
def test_a_malformed_question_is_one_line_naming_file_row_and_field(tmp_path, capsys, change, message):
    path = _broken(tmp_path, change)
    code, err = _refusal(capsys, tmp_path, "--version", "2", "--data", str(path))
    assert code == 2 and str(path) in err and message in err, err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'[{"_id": ', "not JSON"),
        (b"[]", "no questions of LongBench v2"),
        (b"\xff\xfe[]", "not UTF-8"),
    ],
)
def test_an_unreadable_file_is_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "data.json"
    path.write_bytes(content)
    code, err = _refusal(capsys, tmp_path, "--version", "2", "--data", str(path))
    assert code == 2 and message in err, err


def test_a_folder_without_data_json_names_what_to_fetch(tmp_path, capsys):
    code, err = _refusal(capsys, tmp_path, "--version", "2", "--data", str(tmp_path))
    assert code == 2 and "THUDM/LongBench-v2" in err, err


@pytest.mark.parametrize(
    ("model", "expected", "template"),
    [
        ("zoo-rope", "v2_prompt_ids_zoo.json", str(DATA / "chat.jinja")),
        ("smollm2-135m", "v2_prompt_ids_smollm2.json", "auto"),
    ],
)
@pytest.mark.parametrize("chat", [True, False])
def test_the_chain_of_thoughts_two_prompts_are_the_ids_v2_pred_py_sends(
    tmp_path, model, expected, template, chat
):
    """``--cot``: the reasoning prompt and the answer prompt holding the reasoning (stripped, as
    ``pred.py`` quotes it) are, call by call, the ids v2's ``pred.py`` sends with the same replies."""
    from coca_eval.models.presets import resolve_model

    if not Path(resolve_model(model)[0]).is_dir():
        pytest.skip(f"{model} is not cached")
    theirs = json.loads((DATA / expected).read_text())["prompts"]
    theirs = [p["chat" if chat else "plain"] for p in theirs if p["context"] == "cot"]
    longbench_oracle_backend.SEEN.clear()
    result = _invoke(
        tmp_path, "--version", "2", "--model", model, "--data", "smoke", "--protocol", "longbench", "--cot",
        "--lengths", "1001,3000", "--samples", "2", "--chat-template", template if chat else "none",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    ours = sorted((d["tokens"], d["sha256"]) for d in map(_digest, longbench_oracle_backend.SEEN))
    assert len(ours) == len(theirs) == len(DOMAINS) * 2 * 2 * 2
    assert ours == sorted((d["tokens"], d["sha256"]) for d in theirs)


def test_the_chain_of_thought_reasons_then_answers_from_its_reasoning(tmp_path):
    """Exact N counts the first prompt and its 1,024-token reasoning; the answer prompt quotes the
    reasoning (which names the code word), so the oracle answers every question right; each sample
    records its reasoning."""
    longbench_oracle_backend.SEEN.clear()
    rows = _dump(
        tmp_path, "--version", "2", "--model", "zoo-rope", "--cot", "--lengths", "2k", "--samples", "1"
    )
    assert all(r["prompt_tokens"] == 2048 - 1024 for r in rows)
    cells = json.loads((tmp_path / "run.json").read_text())["cells"]
    assert cells and all(c["value"] == 100.0 and c["detail"]["cot"] is True for c in cells)
    assert all(c["detail"]["answer_budget"] == 1024 for c in cells)
    for sample in (s for c in cells for s in c["detail"]["samples"]):
        question = QUESTIONS_BY_ID[sample["_id"]]
        word = question["choice_" + question["answer"]]
        assert sample["cot"] == f"The keeper's code word is {word}." and sample["cot_tokens"] > 0
    seconds = [p for p in longbench_oracle_backend.SEEN if len(p) < 1024 - 100]
    assert len(seconds) == len(cells)  # one answer prompt per question, without the document


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--cot", "--context", "none", "--protocol", "longbench"), "--cot reasons over the document"),
    ],
)
def test_the_chain_of_thought_refuses_what_it_cannot_do(tmp_path, capsys, args, message):
    code, err = _refusal(capsys, tmp_path, "--version", "2", *args)
    assert code == 2 and message in err, err


def test_the_chain_of_thought_refuses_a_thought_decoded_apart(tmp_path, capsys):
    longbench_oracle_backend.register()
    command = ["longbench", "--version", "2", "--model", "zoo-rope", "--backend", "longbench-oracle", "--cot",
               "--thinking", "on", "--lengths", "2k", "--output", str(tmp_path / "run.json")]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(command)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "--cot and a thought decoded apart" in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "run.json").exists()


def test_a_json_lines_copy_reads_as_the_published_list(tmp_path):
    from coca_eval.longbench.v2_data import all_questions

    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    read = all_questions(str(path))
    assert [r.id for r in read] == [q["_id"] for q in QUESTIONS]
    assert [r.answer for r in read] == [q["answer"] for q in QUESTIONS]
