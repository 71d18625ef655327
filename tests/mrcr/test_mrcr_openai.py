"""``--source openai`` on fixture folders written here in OpenAI's layout (``2needle/`` and
``4needle/`` parquet shards): each conversation lands in the shortest length that holds it and scores
as graded; one longer than every length is skipped and counted, never cut; OpenAI's own bins are
recorded when o200k_base can be had; a malformed row is one line naming file, row and field, exit 2,
before any model loads."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from coca_eval.cli import cli, main
from coca_eval.mrcr import data as mrcr_data
from tests.mrcr import mrcr_oracle_backend
from tests.mrcr.mrcr_oracle_backend import TEMPLATE

TOPICS = ("tapirs", "rocks", "lanterns", "owls")


def _row(needles: int, wanted: int, filler: int, prefix: str) -> dict:
    """A conversation in OpenAI's shape: the needle request ``needles`` times among ``filler`` others,
    then OpenAI's final request for the ``wanted``-th needle."""
    messages, answers = [], []
    for i in range(needles + filler):
        needle = i % 2 == 0 and len(answers) < needles or needles + filler - i <= needles - len(answers)
        ask = "write a poem about tapirs" if needle else f"write a blog post about {TOPICS[1 + i % 3]}"
        reply = f"{'Poem' if needle else 'Post'} number {i}: " + " ".join(
            ["the quiet river bends"] * (3 + i % 4)
        )
        messages += [{"role": "user", "content": ask}, {"role": "assistant", "content": reply}]
        if needle:
            answers.append((2 * i + 1, reply))
    index, reply = answers[wanted - 1]
    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(wanted, f"{wanted}th")
    final = f"Prepend {prefix} to the {ordinal} (1 indexed) poem about tapirs. Do not include any other text"
    final += " in your response."
    messages.append({"role": "user", "content": final})
    prompt = json.dumps(messages)
    return {"prompt": prompt, "answer": prefix + reply, "random_string_to_prepend": prefix,
            "n_needles": needles, "desired_msg_index": index, "total_messages": len(messages),
            "n_chars": len(prompt)}  # fmt: skip


def _write(folder, needles: int, rows: list[dict]) -> None:
    (folder / f"{needles}needle").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / f"{needles}needle" / f"{needles}needle_0.parquet")


def _folder(tmp_path):
    data = tmp_path / "mrcr"
    _write(data, 2, [_row(2, 2, 4, "aYooSG8CQg"), _row(2, 1, 6, "Qq8x0LmZt1"), _row(2, 1, 90, "Zz1")])
    _write(data, 4, [_row(4, 3, 14, "Kk7Lm2Pp9Q")])
    return data


def _invoke(tmp_path, data, *extra):
    mrcr_oracle_backend.register()
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE)
    args = ["mrcr", "--model", "zoo-rope", "--backend", "mrcr-oracle", "--source", "openai",
            "--data", str(data), "--chat-template", str(template), "--output", str(tmp_path / "run.json"),
            *extra]  # fmt: skip
    return CliRunner().invoke(cli, args)


def test_rows_are_binned_by_length_scored_and_the_long_ones_counted(tmp_path, monkeypatch):
    class EightTokensACharacter:
        def encode(self, text):
            return list(text) * 8

    monkeypatch.setattr(mrcr_data, "_o200k", EightTokensACharacter)
    result = _invoke(tmp_path, _folder(tmp_path), "--needles", "2,4", "--lengths", "3k,4k", "--samples", "5")
    # a length no row of a needle count falls in is an error cell the command names (exit 2 from a shell)
    assert "2needle @ 4096: no 2needle row of --data" in str(result.exception), result.output
    cells = {(c["dataset"], c["length"]): c for c in json.loads((tmp_path / "run.json").read_text())["cells"]}
    assert {k: c["status"] for k, c in cells.items()} == {
        ("2needle", 3072): "ok",
        ("2needle", 4096): "error",  # no 2-needle conversation is 3k-4k tokens
        ("4needle", 3072): "error",  # ... and no 4-needle one is under 3k
        ("4needle", 4096): "ok",
    }
    two, four = cells["2needle", 3072], cells["4needle", 4096]
    assert two["n"] == 2 and two["value"] == 100.0 and two["detail"]["skipped_too_long"] == 1
    assert four["n"] == 1 and four["value"] == 100.0 and four["detail"]["skipped_too_long"] == 0
    sample = two["detail"]["samples"][0]
    assert sample["row"].endswith("2needle_0.parquet row 0") and sample["prompt_tokens"] + 2048 <= 3072
    messages = json.loads(_row(2, 2, 4, "aYooSG8CQg")["prompt"])
    assert sample["openai_tokens"] == 8 * sum(len(m["content"]) for m in messages) == 7304
    assert sample["openai_bin"] == 8192  # OpenAI's bin (4096, 8192]
    assert 0 < sample["chance"] < 1 and 0 < sample["depths"][0] < 1


def test_without_o200k_the_published_bins_are_left_out_with_the_reason(tmp_path, monkeypatch):
    def unavailable():
        raise OSError("no network")

    monkeypatch.setattr(mrcr_data, "_o200k", unavailable)
    result = _invoke(tmp_path, _folder(tmp_path), "--needles", "2", "--lengths", "3k", "--samples", "2")
    assert result.exit_code == 0, result.output
    cell = json.loads((tmp_path / "run.json").read_text())["cells"][0]
    assert cell["value"] == 100.0 and "o200k_base unavailable (OSError)" in cell["detail"]["openai_bins"]
    assert all(s["openai_bin"] is None for s in cell["detail"]["samples"])


def _refusal(capsys, data, tmp_path) -> tuple[int, str]:
    args = ["mrcr", "--model", str(tmp_path / "absent"), "--source", "openai", "--data", str(data),
            "--needles", "2", "--lengths", "4k", "--output", str(tmp_path / "run.json")]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    return exit_info.value.code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("desired_msg_index"), "row 1: desired_msg_index: no value"),  # parquet's null
        (lambda r: r.update(prompt="[{'role': 'user'"), "row 1: prompt: not JSON"),
        (lambda r: r.update(prompt=json.dumps([{"role": "user"}])), "row 1: prompt: message 0 has no text"),
        (lambda r: r.update(desired_msg_index=99), "row 1: desired_msg_index: 99 is past the conversation"),
        (lambda r: r.update(answer=r["random_string_to_prepend"]), "row 1: answer: nothing after"),
        (lambda r: r.update(n_needles=3), "row 1: n_needles: 3 is not 2, 4 or 8"),
        (lambda r: r.update(prompt=_row(2, 2, 4, "aYooSG8CQg")["prompt"]), "row 1: the same conversation as"),
    ],
)
def test_a_malformed_row_is_one_line_before_any_model_loads(tmp_path, capsys, change, message):
    rows = [_row(2, 2, 4, "aYooSG8CQg"), _row(2, 1, 6, "Qq8x0LmZt1")]
    change(rows[1])
    _write(tmp_path / "mrcr", 2, rows)
    code, err = _refusal(capsys, tmp_path / "mrcr", tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert "2needle_0.parquet" in err and not (tmp_path / "run.json").exists()


def test_a_jsonl_row_without_a_column_is_one_line(tmp_path, capsys):
    row = _row(2, 2, 4, "aYooSG8CQg")
    del row["answer"]
    (tmp_path / "mrcr" / "2needle").mkdir(parents=True)
    (tmp_path / "mrcr" / "2needle" / "extra.jsonl").write_text(json.dumps(row) + "\n")
    code, err = _refusal(capsys, tmp_path / "mrcr", tmp_path)
    assert code == 2 and "extra.jsonl row 0: missing column answer" in err


def test_a_folder_without_the_published_layout_is_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, err = _refusal(capsys, tmp_path / "empty", tmp_path)
    assert code == 2 and "no 2needle/, 4needle/ or 8needle/ *.parquet files" in err


def test_the_hub_unreachable_is_one_line_naming_what_to_fetch(tmp_path, capsys, monkeypatch):
    import huggingface_hub

    def offline(*args, **kwargs):
        raise ConnectionError("the hub is not reachable")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    code, err = _refusal(capsys, "hub", tmp_path)
    assert code == 2 and "openai/mrcr could not be downloaded (the hub is not reachable)" in err
    assert "2needle/, 4needle/, 8needle/" in err


def _v2_file(folder, needles: int, window: str, rows: list[tuple[str, str]]) -> None:
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    name = f"mrcr_v2p1_{needles}needle_{window}_dynamic_fewshot_text_style_fast.csv"
    pd.DataFrame({"queries": [q for q, _ in rows], "answer": [a for _, a in rows]}).to_csv(folder / name)


def _v2_row(wanted: int, key: str) -> tuple[str, str]:
    """A queries text in MRCR v2's transcript shape and its answer (the key, a space, the response)."""
    parts, poems = [], []
    for i in range(6):
        ask = (
            "Write a poem about tapirs in a pirate style." if i % 3 == 0 else f"Write a tweet about owls {i}."
        )
        reply = f"Verse {i}: " + " ".join(["the tide rolls in"] * (2 + i))
        parts.append(f"User: {ask}\n\nAssistant: {reply}")
        if i % 3 == 0:
            poems.append(reply)
    final = (
        f"User: Prepend {key} to the {('first', 'second')[wanted - 1]} poem about tapirs in a pirate style."
    )
    return "\n\n".join(
        [*parts, final + " Do not include any other text in your response."]
    ), f"{key} {poems[wanted - 1]}"


def test_deepminds_v2_rows_are_read_binned_and_graded_by_their_metric(tmp_path, monkeypatch):
    from coca_eval.mrcr.deepmind import v2_score

    rows = [_v2_row(2, "b6Yath1qpbUa"), _v2_row(1, "GIJBqhDo2IpT")]
    _v2_file(tmp_path / "v2", 2, "in_(4096,8192)", rows)
    # a chatty opening, then the key and the right response: full marks under MRCR v2's metric only
    replies = {answer.split(" ", 1)[0]: "Sure! " + answer for _, answer in rows}

    def reply(self, prompt) -> list[int]:
        final = self.tokenizer.decode(list(prompt), skip_special_tokens=True).rsplit("Prepend ", 1)[-1]
        return self.tokenizer(replies[final.split(" ", 1)[0]], add_special_tokens=False).input_ids

    monkeypatch.setattr(mrcr_oracle_backend.MrcrOracle, "answer", reply)
    result = _invoke(tmp_path, tmp_path / "v2", "--source", "deepmind", "--needles", "2", "--lengths", "4k")
    assert result.exit_code == 0, result.output
    cell = json.loads((tmp_path / "run.json").read_text())["cells"][0]
    assert cell["n"] == 2 and cell["value"] == 100.0 and cell["detail"]["source"] == "deepmind"
    for sample in cell["detail"]["samples"]:
        assert sample["grading"] == "mrcr_v2" and sample["deepmind_bin"] == 8192
        assert (
            sample["output"].startswith("Sure! ") and v2_score(sample["output"], sample["answers"][0]) == 1.0
        )


def test_deepmind_without_a_folder_is_one_line(tmp_path, capsys):
    args = ["mrcr", "--model", str(tmp_path / "absent"), "--source", "deepmind", "--lengths", "4k"]
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "MRCR v2's CSV files, which are not on the hub" in err


def test_a_jsonl_file_not_in_utf8_is_one_line(tmp_path, capsys):
    (tmp_path / "mrcr" / "2needle").mkdir(parents=True)
    (tmp_path / "mrcr" / "2needle" / "latin.jsonl").write_bytes('{"prompt": "caf\xe9"}\n'.encode("latin-1"))
    code, err = _refusal(capsys, tmp_path / "mrcr", tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "latin.jsonl" in err and "UTF-8" in err, err
