"""Build HELMET's RAG prompts with HELMET's own loaders and tokenizer call, and print their token ids as
JSON (a digest per prompt): the reference ``tests/helmet/test_helmet_protocol.py`` holds
``coca-eval helmet --protocol helmet`` to.

Run outside this project, against a directory holding HELMET's ``data.py``, ``model_utils.py`` and
``utils.py`` at one commit and a ``COMMIT`` file naming it (HELMET is not on PyPI; ``git show
COMMIT:data.py`` etc. from a clone will do), in a venv with what those files import:

    python -m venv /tmp/venv-helmet && /tmp/venv-helmet/bin/pip install torch==2.13.0 transformers \
        datasets rouge-score==0.1.2 pytrec-eval-terrier==0.5.11
    /tmp/venv-helmet/bin/python scripts/helmet_prompt_ids.py HELMET_DIR \
        > tests/helmet/data/helmet_prompts.json

The data are the test files of ``tests/helmet/helmet_files.py`` (for ICL, HELMET's ``load_dataset``
answers with that module's labelled sets instead of the hub's) (written here into a temporary
directory, two passage sizes: one whose prompts fit HELMET's lengths and one that HELMET must cut), the
tokenizer the miniature zoo's (committed in the package). For each file, length and chat setting, HELMET
picks its questions as ``eval.py`` does (``random.seed(seed)`` then ``load_data``) and each prompt is
``tokenize()``'s, as its transformers model calls it (no system message).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ZOO_TOKENIZER = ROOT / "coca_eval" / "zoo" / "checkpoints" / "zoo-rope"
SIMPLE_TEMPLATE = (  # the tests' plain turn format (tests/ruler/conftest.py)
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n{% endif %}"
)
CASES = (  # task, test file pattern, demo file
    ("kilt_nq", "kilt/nq-dev-multikilt_1000_k{k}_dep6.jsonl", "kilt/nq-train-multikilt_1000_k3_dep6.jsonl"),
    ("kilt_popqa_3", "kilt/popqa_test_1000_k{k}_dep6.jsonl", "kilt/popqa_test_1000_k3_dep6.jsonl"),
)
LENGTHS = ((8192, 50), (16384, 105))
SENTENCES = (3, 5)  # passage sizes: fits, cut
SAMPLES, SEED, SHOTS, BUDGET = 4, 42, 2, 20
ICL_SAMPLES = 12  # fewer than the test split's 40: HELMET's balanced choice of questions


def digest(ids: list[int]) -> str:
    return hashlib.sha256(json.dumps(ids).encode()).hexdigest()


def summaries(model_utils, data, tokenizer, setting: tuple[int, int, bool], keep) -> list[dict]:
    """Each sample's prompt as HELMET's ``tokenize()`` builds it at ``setting`` (length, generation
    budget, chat), summarised: what ``keep(sample)`` names, the token count, digest, head and tail."""
    length, budget, chat = setting
    out = []
    for sample in data["data"]:
        encoded = model_utils.tokenize(
            dict(sample), data, tokenizer, length, budget, chat, system_message=None
        )
        ids = encoded.input_ids[0].tolist()
        out.append(
            {**keep(sample), "tokens": len(ids), "sha256": digest(ids), "head": ids[:12], "tail": ids[-12:]}
        )
    return out


def question(sample) -> dict:
    return {"question": sample["question"]}


def question_answer(sample) -> dict:
    return {"question": sample["question"], "answer": sample["answer"]}


def ranked_passages(sample) -> dict:
    qrel = sorted(sample["qrel"], key=lambda q: int(q[1]), reverse=True)
    return {"qid": sample["qid"], "references": [f"{i}:{label}" for i, label in qrel]}


def references(sample) -> dict:
    answer = sample["answer"]
    return {"references": [answer] if isinstance(answer, str) else list(answer)}


def main(helmet: Path) -> dict:
    sys.path.insert(0, str(helmet))
    sys.path.insert(0, str(ROOT / "tests" / "helmet"))
    data_module = importlib.import_module("data")
    model_utils = importlib.import_module("model_utils")
    files = importlib.import_module("helmet_files")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(ZOO_TOKENIZER)
    tokenizer.chat_template = SIMPLE_TEMPLATE
    out = {"helmet_commit": (helmet / "COMMIT").read_text().strip(), "cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        for sentences in SENTENCES:
            root = files.write_data_dir(Path(tmp) / f"s{sentences}", sentences)
            for task, test, demo in CASES:
                for length, k in LENGTHS:
                    random.seed(SEED)  # as eval.py seeds before each dataset's load_data
                    threshold = float(task.split("_")[-1]) if "popqa" in task else None
                    data = data_module.load_qa(
                        task, str(root / test.format(k=k)), str(root / demo), SAMPLES, threshold, SHOTS
                    )
                    for chat in (False, True):
                        prompts = summaries(model_utils, data, tokenizer, (length, BUDGET, chat), question)
                        out["cases"].append(
                            {"task": task, "sentences": sentences, "length": length, "chat": chat,
                             "prompts": prompts}
                        )  # fmt: skip
        out["icl"] = icl_cases(helmet, data_module, model_utils, files, tokenizer)
        out["rerank"] = rerank_cases(data_module, model_utils, files, tokenizer, Path(tmp) / "rerank")
        out["recall"] = recall_cases(data_module, model_utils, files, tokenizer, Path(tmp) / "recall")
    return out


def icl_cases(helmet: Path, data_module, model_utils, files, tokenizer) -> list[dict]:
    """HELMET's ``load_icl`` on the test sets of ``helmet_files.py``: ``datasets.load_dataset`` answers
    with them (labels as ClassLabel features, as the hub's sets have), everything else is HELMET's."""
    import datasets

    def fake_load(hub_id, *args, **kwargs):
        task = {"CogComp/trec": "icl_trec_coarse", "xingkunliuxtracta/nlu_evaluation_data": "icl_nlu"}[hub_id]
        field, labels, has_test = files.ICL_TASKS[task]
        features = datasets.Features(
            {
                "text": datasets.Value("string"),
                field: datasets.ClassLabel(names=[f"L{i}" for i in range(labels)]),
            }
        )
        splits = {"train": files.icl_rows(task, 400, 1)} | (
            {"test": files.icl_rows(task, 40, 2)} if has_test else {}
        )
        return datasets.DatasetDict(
            {k: datasets.Dataset.from_list(v, features=features) for k, v in splits.items()}
        )

    real_load, data_module.load_dataset = data_module.load_dataset, fake_load
    cases = []
    for task, shots_by_length in (
        ("icl_trec_coarse", ((8192, 400), (16384, 800))),
        ("icl_nlu", ((8192, 510),)),
    ):
        for length, shots in shots_by_length:
            random.seed(SEED)
            data = data_module.load_icl(f"{task}_{shots}shot_balance", max_test_sample=ICL_SAMPLES, seed=SEED)
            for chat in (False, True):
                prompts = summaries(model_utils, data, tokenizer, (length, BUDGET, chat), question_answer)
                cases.append({"task": task, "length": length, "chat": chat, "prompts": prompts})
    data_module.load_dataset = real_load
    return cases


def rerank_cases(data_module, model_utils, files, tokenizer, root: Path) -> list[dict]:
    """HELMET's ``load_msmarco_rerank`` on the files of ``helmet_files.write_rerank_dir``: 4 queries
    (the demonstration file is then over twice the test set: every test qid left out at once) and 8
    (each question's own qid left out)."""
    files.write_rerank_dir(root)
    cases = []
    for samples in (4, 8):
        for length, k in ((8192, 50), (16384, 130)):
            random.seed(SEED)
            data = data_module.load_msmarco_rerank(
                str(root / f"msmarco/test_reranking_data_k{k}_dep3.jsonl"),
                str(root / "msmarco/test_reranking_data_k10_dep3.jsonl"),
                samples, SHOTS, SEED,
            )  # fmt: skip
            for chat in (False, True):
                prompts = summaries(model_utils, data, tokenizer, (length, 200, chat), ranked_passages)
                cases.append({"samples": samples, "length": length, "chat": chat, "prompts": prompts})
    return cases


def recall_cases(data_module, model_utils, files, tokenizer, root: Path) -> list[dict]:
    """HELMET's ``load_json_kv`` and ``load_ruler`` on the files of ``helmet_files.write_recall_dir``."""
    files.write_recall_dir(root)
    cases = []
    for task, budget in (("json_kv", 100), ("ruler_niah_mk_2", 50), ("ruler_niah_mv", 50)):
        for length, k in ((8192, 105), (16384, 220)):
            random.seed(SEED)
            if task == "json_kv":
                data = data_module.load_json_kv(
                    str(root / f"json_kv/test_k{k}_dep6.jsonl"), SHOTS, SAMPLES, SEED
                )
            else:
                folder = {"ruler_niah_mk_2": "niah_multikey_2", "ruler_niah_mv": "niah_multivalue"}[task]
                path = str(root / f"ruler/{folder}/validation_{length}.jsonl")
                data = data_module.load_ruler(task, path, SAMPLES, seed=SEED)
            for chat in (False, True):
                prompts = summaries(model_utils, data, tokenizer, (length, budget, chat), references)
                cases.append({"task": task, "length": length, "chat": chat, "prompts": prompts})
    return cases


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=1))
