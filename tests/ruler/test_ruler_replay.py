"""``coca-eval ruler --replay``: lm-eval's RULER prompts (the real lm-eval 0.4.13 folder of
``tests/imported/data/lm_eval_ruler``) answered here. Every replayed sample is one lm-eval logged, under
its index, references and prompt hash, tokenized as lm-eval's hf model does; the gate pairs the replay
with ``coca-eval import lm-eval`` of the same folder (a changed per-sample score in the import changes
its verdict) and refuses another run's samples; on lm-eval's own model the replay gives lm-eval's
answers (slow)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_gate_cli import invoke

from coca_eval.api import Runtime, evaluate
from coca_eval.imported.evaluation_harness import import_harness_dir
from coca_eval.methods import make_method
from coca_eval.results import load_run, save_run
from coca_eval.ruler.replay import make_replay_params
from coca_eval.ruler.report import protocol_line
from tests.imported.lm_eval_folders import LM_EVAL_RULER, copy_lm_eval_ruler, rewrite_results, rewrite_samples

DATA = LM_EVAL_RULER
TASKS = {"niah_single_1": "niah_single_1", "ruler_vt": "vt"}  # lm-eval's names -> ours


def _logged(folder: Path = DATA) -> dict[tuple[str, int, int], dict]:
    """lm-eval's samples by (our task, length, index)."""
    found = {}
    for theirs, ours in TASKS.items():
        for line in next(folder.glob(f"samples_{theirs}_*.jsonl")).read_text().splitlines():
            sample = json.loads(line)
            found[ours, sample["doc"]["max_length"], sample["doc"]["index"]] = sample
    return found


def _replay(folder: Path, output: Path, model: str = "zoo-rope", dtype: str = "float32"):
    method = make_method(model, "none", None, dtype, "hf")
    evaluate("ruler", [method], make_replay_params(str(folder)), output, Runtime())
    return load_run(output)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> Path:
    """The zoo's RoPE model answering lm-eval's ten prompts (about 10 s), as a results file."""
    output = tmp_path_factory.mktemp("replay") / "replay.json"
    _replay(DATA, output)
    return output


def test_every_replayed_sample_is_a_logged_prompt_tokenized_as_lm_eval_does(replayed):
    from transformers import AutoTokenizer

    from coca_eval.models.presets import resolve_model

    run, logged = load_run(replayed), _logged()
    tokenizer = AutoTokenizer.from_pretrained(resolve_model("zoo-rope")[0])
    seen = set()
    for cell in run.cells:
        assert cell.status == "ok", cell.detail
        budget = 128 if cell.dataset == "niah_single_1" else 30  # lm-eval's max_gen_toks
        assert cell.detail["answer_budget"] == budget and cell.detail["haystack"] == "lm-eval's"
        for record in cell.detail["samples"]:
            sample = logged[cell.dataset, cell.length, record["index"]]
            text = sample["arguments"]["gen_args_0"]["arg_0"]
            assert record["prompt_sha256"] == sample["prompt_hash"] and record["doc_id"] == sample["doc_id"]
            assert record["answers"] == sample["doc"]["outputs"]
            # lm-eval's hf model at its defaults: the tokenizer's own special tokens
            assert record["prompt_tokens"] == len(tokenizer(text).input_ids)
            seen.add((cell.dataset, cell.length, record["index"]))
    assert seen == set(logged)
    assert run.config["params"] == import_harness_dir(DATA).config["params"]
    assert run.config["replay_of"]["version"] == "0.4.13"
    assert "haystack lm-eval's" in protocol_line(run)
    assert protocol_line(run).endswith(
        "Prompts replayed from lm-eval 0.4.13 (results_2026-11-28T00-45-47.794604.json)."
    )


def _printed(task: str, key: str, value: float):
    """A change to lm-eval's results: the aggregate ``key`` of ``task`` printed as ``value``."""

    def change(results: dict) -> dict:
        results["results"][task][key] = value
        return results

    return change


def _gate(capsys, base: Path, cand: Path, *options) -> tuple[int, dict]:
    result = invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--json", *options)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def _verdicts(verdict: dict) -> dict[tuple, dict]:
    return {(c["dataset"], c["length"]): c for c in verdict["cells"]}


def test_the_gate_pairs_the_replay_with_the_import_and_reads_each_sample(capsys, replayed, tmp_path):
    """lm-eval's SmolLM2 found every needle, the zoo's model none: paired, the NIAH cells are a
    regression at alpha 0.6 (3 discordant pairs). Planted: one needle lm-eval's SmolLM2 missed at 1k
    (its logged answer emptied, its score and aggregate with it) leaves 2 discordant pairs there, and
    that cell's verdict turns to pass; the 2k cell's stays."""
    imported = tmp_path / "imported.json"
    save_run(import_harness_dir(DATA), imported)
    code, verdict = _gate(capsys, imported, replayed, "--alpha", "0.6")
    cells = _verdicts(verdict)
    assert code == 1 and {c["units"] for c in cells.values()} == {2, 3}
    assert cells["niah_single_1", 1024]["verdict"] == cells["niah_single_1", 2048]["verdict"] == "regression"

    folder = copy_lm_eval_ruler(tmp_path)

    def miss(sample: dict) -> dict:
        if sample["doc"]["max_length"] == 1024 and sample["doc"]["index"] == 0:
            return {**sample, "filtered_resps": [""], "resps": [[""]], "1024": 0}
        return sample

    rewrite_samples(folder, "niah_single_1", miss)
    rewrite_results(folder, _printed("niah_single_1", "1024,none", 2 / 3))
    planted = tmp_path / "planted.json"
    save_run(import_harness_dir(folder), planted)
    _, verdict = _gate(capsys, planted, replayed, "--alpha", "0.6")
    cells = _verdicts(verdict)
    assert cells["niah_single_1", 1024]["verdict"] == "inconclusive"  # one of three: no regression shown
    assert cells["niah_single_1", 2048]["verdict"] == "regression"


def _other_prompt(index: int):
    """A change to lm-eval's samples: the 1k niah prompt ``index`` asks in other words (its hash
    follows), references unchanged: another run's sample that happens to want the same answer."""
    import hashlib

    def change(sample: dict) -> dict:
        if sample["doc"]["max_length"] != 1024 or sample["doc"]["index"] != index:
            return sample
        text = sample["arguments"]["gen_args_0"]["arg_0"].replace("special magic number", "magic number", 1)
        arguments = {"gen_args_0": {**sample["arguments"]["gen_args_0"], "arg_0": text}}
        return {**sample, "arguments": arguments, "prompt_hash": hashlib.sha256(text.encode()).hexdigest()}

    return change


def test_another_runs_prompts_are_refused_even_with_the_same_references(capsys, replayed, tmp_path):
    folder = copy_lm_eval_ruler(tmp_path)
    rewrite_samples(folder, "niah_single_1", _other_prompt(1))
    other = tmp_path / "other.json"
    save_run(import_harness_dir(folder), other)
    result = invoke(capsys, "gate", "--baseline", other, "--candidate", replayed)
    assert result.returncode == 2
    assert "1 of 3 hold the same references but other prompts (sample 1: prompt sha256" in result.stderr


def test_a_resumed_replay_answers_again_only_cells_whose_prompts_changed(replayed, tmp_path):
    """A replay's journal resumed on the same folder answers nothing again; on a folder where one
    prompt changed (lm-eval's parameters unchanged), that prompt's cell alone is answered again."""
    output = tmp_path / "replay.json"
    journal = tmp_path / "replay.journal.jsonl"
    shutil.copy(replayed.with_name(journal.name), journal)

    def answered_by(folder: Path) -> list[tuple]:
        before = len(journal.read_text().splitlines())
        run = _replay(folder, output)
        lines = [json.loads(line) for line in journal.read_text().splitlines()[before:]]
        parts = [(line["part"], line["data"]["prompt_sha256"]) for line in lines if line["kind"] == "part"]
        return parts, run

    assert answered_by(DATA)[0] == []
    folder = copy_lm_eval_ruler(tmp_path)
    rewrite_samples(folder, "niah_single_1", _other_prompt(2))
    parts, run = answered_by(folder)
    logged = _logged(folder)
    assert sorted(parts) == [(str(i), logged["niah_single_1", 1024, i]["prompt_hash"]) for i in range(3)]
    (cell,) = [c for c in run.cells if (c.dataset, c.length) == ("niah_single_1", 1024)]
    assert cell.detail["samples"][2]["prompt_sha256"] == logged["niah_single_1", 1024, 2]["prompt_hash"]


def _other_reference(index: int, reference: str):
    """A change to lm-eval's samples: the 1k niah sample ``index`` wants ``reference`` (its logged
    score, which lm-eval's answer no longer earns, follows), the prompt unchanged: a folder whose
    references were corrected after a run."""

    def change(sample: dict) -> dict:
        if sample["doc"]["max_length"] != 1024 or sample["doc"]["index"] != index:
            return sample
        doc = {**sample["doc"], "outputs": [reference]}
        return {**sample, "doc": doc, "target": str([reference]), "1024": 0}

    return change


def test_a_resumed_replay_answers_again_a_cell_whose_references_changed(replayed, tmp_path):
    """The prompts stay, one reference changes to the zoo model's own answer to that prompt: resumed
    from the replay's journal, that cell is answered again and scores 1 of 3 (33.3) under the new
    references, not the 0 the old answers were scored at; the other cells are taken from the journal."""
    output = tmp_path / "replay.json"
    journal = tmp_path / "replay.journal.jsonl"
    shutil.copy(replayed.with_name(journal.name), journal)
    (old,) = [c for c in load_run(replayed).cells if (c.dataset, c.length) == ("niah_single_1", 1024)]
    answer = old.detail["samples"][2]["output"].strip()
    assert old.value == 0.0 and answer and old.detail["samples"][2]["answers"] != [answer]
    folder = copy_lm_eval_ruler(tmp_path)
    rewrite_samples(folder, "niah_single_1", _other_reference(2, answer))
    rewrite_results(folder, _printed("niah_single_1", "1024,none", 2 / 3))
    before = len(journal.read_text().splitlines())
    run = _replay(folder, output)
    lines = [json.loads(line) for line in journal.read_text().splitlines()[before:]]
    answered = {line["key"] for line in lines if line["kind"] == "part"}
    assert len(answered) == 1 and sorted(line["part"] for line in lines if line["kind"] == "part") == [
        "0",
        "1",
        "2",
    ]
    (cell,) = [c for c in run.cells if (c.dataset, c.length) == ("niah_single_1", 1024)]
    assert cell.detail["samples"][2]["answers"] == [answer]
    assert round(cell.value, 1) == 33.3


@pytest.mark.parametrize(
    ("options", "change", "message"),
    [
        (["--tasks", "vt"], None, "--replay takes --tasks from the lm-eval run; drop them"),
        (["--samples", "5", "--seed", "1"], None, "--replay takes --samples, --seed from the lm-eval run"),
        ([], lambda s: {**s, "prompt_hash": "0" * 64}, "doc 0's prompt does not hash to its prompt_hash"),
        ([], lambda s: {**s, "arguments": {}}, "logs no prompt (arguments.gen_args_0.arg_0)"),
    ],
)
def test_bad_replays_are_one_line(capsys, tmp_path, options, change, message):
    folder = copy_lm_eval_ruler(tmp_path)
    if change is not None:
        rewrite_samples(folder, "ruler_vt", change)
    result = invoke(capsys, "ruler", "--replay", folder, "--model", "zoo-rope", *options,
                    "--output", tmp_path / "r.json")  # fmt: skip
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "r.json").exists()


def test_a_folder_of_other_tasks_or_picked_samples_is_refused(capsys, tmp_path):
    generation = DATA.parent / "lm_eval_generation"
    result = invoke(capsys, "ruler", "--replay", generation, "--model", "zoo-rope")
    assert result.returncode == 2 and "--replay answers lm-eval's RULER tasks" in result.stderr
    folder = copy_lm_eval_ruler(tmp_path)
    path = next(folder.glob("samples_ruler_vt_*.jsonl"))
    lines = path.read_text().splitlines()
    path.write_text("\n".join(line for line in lines if json.loads(line)["doc_id"] != 0) + "\n")
    kept = [json.loads(line) for line in path.read_text().splitlines()]
    kept = [s["1024"] for s in kept if s["doc"]["max_length"] == 1024]
    rewrite_results(folder, _printed("ruler_vt", "1024,none", sum(kept) / len(kept)))
    result = invoke(capsys, "ruler", "--replay", folder, "--model", "zoo-rope")
    assert result.returncode == 2 and "vt at 1024 holds indices [1]; a replay needs 0..n-1" in result.stderr


@pytest.mark.slow
def test_on_lm_evals_own_model_the_replay_gives_lm_evals_answers(tmp_path):
    """SmolLM2-135M-Instruct in fp32, as lm-eval ran it (there with batches of 4, left-padded): every one
    of the ten answers equals lm-eval's, so the replay tokenizes and decodes as lm-eval's hf model did
    (about a minute on a 2-core CPU)."""
    run = _replay(DATA, tmp_path / "smollm2.json", model="smollm2-135m")
    logged = _logged()
    answers = [(s["output"], logged[c.dataset, c.length, s["index"]]["filtered_resps"][0])
               for c in run.cells for s in c.detail["samples"]]  # fmt: skip
    assert len(answers) == 10 and all(ours == theirs for ours, theirs in answers)


def test_the_interop_pages_replay_example_runs_as_written(capsys, tmp_path, monkeypatch):
    """docs/interop.md's replay block, line by line (the checkout's test data for its folder)."""
    import shlex

    from tests.docs.doc_blocks import ROOT, examples

    (block,) = [b for b in examples() if b.page == "docs/interop.md" and "--replay" in b.text]
    monkeypatch.chdir(tmp_path)
    lines = [line for line in block.text.splitlines() if line.startswith("coca-eval ")]
    for line in lines:
        args = shlex.split(line.replace(" tests/", f" {ROOT}/tests/"))[1:]
        result = invoke(capsys, *args)
        assert result.returncode == 0, (line, result.stderr)
    assert "REGRESSION" not in result.stdout.splitlines()[0]
    assert load_run(tmp_path / "runs" / "replay.json").config["replay_of"]


def test_a_chat_templated_lm_eval_run_is_replayed_as_logged_and_pairs(capsys, tmp_path):
    """lm-eval with --apply_chat_template logs the rendered text and the template's hash: the replay
    answers the text as it is and records that hash, so its cells pair with the import's."""
    folder = copy_lm_eval_ruler(tmp_path)
    rewrite_results(folder, lambda r: {**r, "chat_template_sha": "ab" * 32})
    imported, replay = tmp_path / "imported.json", tmp_path / "replay.json"
    save_run(import_harness_dir(folder), imported)
    run = _replay(folder, replay)
    assert {c.detail["chat_template"] for c in run.cells} == {"ab" * 32}
    assert run.config["params"]["chat_template"] == "ab" * 32
    code, verdict = _gate(capsys, imported, replay)
    assert code == 0 and len(verdict["cells"]) == 4


def test_a_task_with_stop_strings_is_refused(capsys, tmp_path):
    folder = copy_lm_eval_ruler(tmp_path)

    def stops(results: dict) -> dict:
        config = results["configs"]["ruler_vt"]
        config["generation_kwargs"] = {**config["generation_kwargs"], "until": ["\n"]}
        return results

    rewrite_results(folder, stops)
    result = invoke(capsys, "ruler", "--replay", folder, "--model", "zoo-rope")
    assert result.returncode == 2 and "ruler_vt stops at strings ['\\n']" in result.stderr
