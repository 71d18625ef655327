"""Run HELMET's own long-QA and summarisation code on frozen inputs and print what it gives, as JSON:

* ``prompts``: the prompts ``load_narrativeqa``, ``load_infbench`` (qa, choice, sum) and
  ``load_multi_lexsum`` (HELMET's ``data.py``) build from the files ``tests/helmet/long_files.py`` writes,
  its ``prompt_template`` (no chat template) and ``user_template`` (a chat's user turn, as a digest)
  filled per sample;
* ``metrics``: the metrics each task's post-processing gives the frozen answers of
  ``tests/helmet/data/long_cases.json`` (``default_post_process``; the choice set's and Multi-LexSum's
  own, returned by their loaders);
* ``judge``: the judge prompts and per-sample scores of ``check_metrics`` in HELMET's
  ``scripts/eval_gpt4_longqa.py`` and ``scripts/eval_gpt4_summ.py``, run with a stand-in for the GPT-4o
  client that records the prompts (kept as digests with their filled ends) and answers the frozen
  verdicts.

Run outside this project, against a checkout of princeton-nlp/HELMET (or a directory holding its
``data.py``, ``utils.py``, ``scripts/eval_gpt4_longqa.py``, ``scripts/eval_gpt4_summ.py`` and a ``COMMIT``
file naming the commit), in a venv with what ``data.py`` imports (``datasets``, ``transformers``, torch,
``rouge-score``, ``pytrec-eval-terrier``, numpy, tqdm):

    python scripts/helmet_long_values.py HELMET_DIR > tests/helmet/data/helmet_long_values.json

HELMET loads these sets from the hub by name; here ``datasets.load_dataset`` answers with the test files,
and the two steps that need the Llama-2 tokenizer (``filter_length`` and ``truncate_llama2``: the files'
documents are short) pass the rows through. NarrativeQA's and Multi-LexSum's demonstrations come from an
unseeded shuffle, so their prompts are read with ``shots=0``; InfiniteBench's with HELMET's two.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import runpy
import subprocess
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = 4


def _sets(root: Path) -> dict:
    """What ``load_dataset`` returns for each hub id HELMET names, read from the test files."""
    import datasets

    from_json = datasets.load_dataset

    def split(path: Path, features=None):
        return from_json("json", data_files=str(path), features=features)["train"]

    def answer(name: str, features=None):
        if name == "narrativeqa":
            return datasets.DatasetDict(
                {s: split(root / "narrativeqa" / f"{s}.jsonl") for s in ("test", "train")}
            )
        if name == "allenai/multi_lexsum":
            files = {"validation": "multi_lexsum_val.jsonl", "train": "train.jsonl"}
            return datasets.DatasetDict({s: split(root / "multi_lexsum" / f) for s, f in files.items()})
        kinds = ("qa", "choice", "sum")
        return datasets.DatasetDict(
            {
                f"longbook_{k}_eng": split(root / "infbench" / f"longbook_{k}_eng.jsonl", features)
                for k in kinds
            }
        )

    return answer


class _Tokenizer:
    """Stands in for the Llama-2 tokenizer of NarrativeQA's length filter: every story is long enough."""

    @classmethod
    def from_pretrained(cls, name):
        return cls()

    def __call__(self, text, **kwargs):
        return {"input_ids": [0] * 131073}


def _data_module(helmet: Path, root: Path):
    sys.path.insert(0, str(helmet))
    import datasets

    answer = _sets(root)
    hub = lambda path, *a, features=None, **k: answer(path, features)  # noqa: E731
    datasets.load_dataset = hub  # load_infbench imports it from datasets when it runs
    data = importlib.import_module("data")
    data.load_dataset = hub
    data.filter_length = lambda rows, *a, **k: rows
    data.truncate_llama2 = lambda dataset, rows, *a, **k: rows
    data.AutoTokenizer = _Tokenizer
    return data


def _loaded(data) -> dict:
    return {
        "narrativeqa": data.load_narrativeqa("narrativeqa_7892", 0, SAMPLES, 42),
        "infbench_qa": data.load_infbench("infbench_qa_eng_7982", 2, SAMPLES, 42),
        "infbench_choice": data.load_infbench("infbench_choice_eng_7982", 2, SAMPLES, 42),
        "infbench_sum": data.load_infbench("infbench_sum_eng_6792", 2, SAMPLES, 42),
        "multi_lexsum": data.load_multi_lexsum("multi_lexsum_7492", 0, SAMPLES, 42),
    }


def _prompts(loaded: dict) -> dict:
    out = {}
    for task, made in loaded.items():
        rows = [dict(row) for row in made["data"]]
        out[task] = [
            {
                "prompt": made["prompt_template"].format(**row),
                "user": digest(made["user_template"].format(**row)),
                "answers": row["answer"],
            }
            for row in rows
        ]
    return out


def _metrics(data, loaded: dict, cases: dict) -> dict:
    out = {}
    for task, rows in cases.items():
        post = loaded[task].get("post_process", data.default_post_process)
        scored = [post({"output": c["output"]}, {"answer": c["answers"]}) for c in rows]
        out[task] = [
            {k: float(v) for k, v in mets.items()} | {"parsed": info["parsed_output"]}
            for mets, info in scored
        ]
    return out


class _Judge:
    """The GPT-4o client's stand-in: records the prompts, answers each with its frozen verdict."""

    def __init__(self, verdicts: list[str]):
        self.verdicts, self.prompts = verdicts, []

    def generate_batch(self, prompt, batch_file=None):
        self.prompts = list(prompt)
        return [{"output": v} for v in self.verdicts]


def _judge_script(helmet: Path, name: str) -> dict:
    sys.modules.setdefault("model_utils", types.SimpleNamespace(OpenAIModel=None))
    return runpy.run_path(str(helmet / "scripts" / name), run_name="helmet_judge")


def _check(script: dict, rows: list[dict], verdicts: list[str], results: str) -> dict:
    """``check_metrics`` on ``rows`` (as HELMET's results file holds them) in the current directory."""
    Path(results).write_text(json.dumps({"data": rows, "averaged_metrics": {}}), encoding="utf-8")
    judge = _Judge(verdicts)
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        checked = script["check_metrics"](judge, results, results + ".out")
    scores = [d.get("gpt-4-scores") for d in checked["data"]]
    return {
        "prompts": [digest(p) for p in judge.prompts],
        "scores": scores,
        "averaged": checked["averaged_metrics"],
    }


def digest(text: str) -> dict:
    """What the reference keeps of a long prompt: its length, sha256 and the filled end of it."""
    return {"chars": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest(), "tail": text[-300:]}


def _judge(helmet: Path, root: Path, cases: dict) -> dict:
    longqa, summ = _judge_script(helmet, "eval_gpt4_longqa.py"), _judge_script(helmet, "eval_gpt4_summ.py")
    rows = [
        {"question": c["question"], "answer": c["answers"], "output": c["output"]}
        for c in cases["narrativeqa"]
    ]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        out["narrativeqa"] = _check(
            longqa, rows, [c["verdict"] for c in cases["narrativeqa"]], "narrativeqa.json"
        )
        for folder in ("infbench", "multi_lexsum"):  # the judge reads its key points from data/
            (Path(tmp) / "data" / folder).mkdir(parents=True)
        for name in ("infbench/longbook_sum_eng_keypoints.jsonl", "multi_lexsum/multi_lexsum_val.jsonl"):
            (Path(tmp) / "data" / name).write_text(
                (root / name).read_text(encoding="utf-8"), encoding="utf-8"
            )
        books = [
            json.loads(x) for x in (root / "infbench" / "longbook_sum_eng.jsonl").read_text().splitlines()
        ]
        cases_sum = cases["infbench_sum"]
        rows = [
            {"id": books[c["index"]]["id"], "answer": books[c["index"]]["answer"], "output": c["output"]}
            for c in cases_sum
        ]
        verdicts = [v for c in cases_sum for v in c["verdicts"]]
        out["infbench_sum"] = _check(summ, rows, verdicts, "infbench_sum.json")
        lex = [
            json.loads(x) for x in (root / "multi_lexsum" / "multi_lexsum_val.jsonl").read_text().splitlines()
        ]
        cases_lex = cases["multi_lexsum"]
        rows = [
            {
                "id": lex[c["index"]]["id"],
                "summary/long": lex[c["index"]]["summary/long"],
                "output": c["output"],
            }
            for c in cases_lex
        ]
        verdicts = [v for c in cases_lex for v in c["verdicts"]]
        out["multi_lexsum"] = _check(summ, rows, verdicts, "multi_lexsum.json")
        os.chdir(ROOT)
    return out


def _commit(helmet: Path) -> str:
    found = subprocess.run(["git", "-C", str(helmet), "rev-parse", "HEAD"], capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 else (helmet / "COMMIT").read_text().strip()


def main(helmet: Path) -> dict:
    sys.path.insert(0, str(ROOT / "tests" / "helmet"))
    from long_files import write_long_dir  # standard library only: the test files, byte for byte

    cases = json.loads((ROOT / "tests" / "helmet" / "data" / "long_cases.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        root = write_long_dir(Path(tmp))
        data = _data_module(helmet, root)
        loaded = _loaded(data)
        values = {"helmet_commit": _commit(helmet), "samples": SAMPLES, "prompts": _prompts(loaded)}
        values["metrics"] = _metrics(data, loaded, cases["metrics"])
        values["judge"] = _judge(helmet, root, cases["judge"])
    return values


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]).resolve()), indent=1, ensure_ascii=False))
