"""HELMET's main setting, 128k, under ``--protocol helmet``: the unit counts and files its main configs
name (princeton-nlp/HELMET at 4526dfb, ``configs/recall.yaml``, ``rag.yaml``, ``rerank.yaml``,
``icl.yaml``, each at ``input_max_length: 131072``), written out here from those files."""

from __future__ import annotations

import json
import random

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.params import check_methods, make_helmet_params
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources, exact_units, helmet_units
from coca_eval.helmet.tasks import HELMET_TASKS
from tests.helmet.helmet_files import _kv_row

# From HELMET's main configs: json_kv's test_k1800 file (recall.yaml l. 4), the RAG files' k1000
# (rag.yaml l. 4), re-ranking's k1000 (rerank.yaml l. 4), and the ICL datasets' shot counts
# (icl.yaml l. 2: icl_trec_coarse_6600shot_balance, ...).
HELMET_128K = {
    "json_kv": 1800,
    "kilt_nq": 1000,
    "kilt_triviaqa": 1000,
    "kilt_hotpotqa": 1000,
    "kilt_popqa_3": 1000,
    "msmarco_rerank_psg": 1000,
    "icl_trec_coarse": 6600,
    "icl_trec_fine": 6400,
    "icl_banking77": 5900,
    "icl_clinic150": 7050,
    "icl_nlu": 8296,
}
HELMET_128K_FILES = {  # the test files HELMET's main configs read
    "json_kv": "json_kv/test_k1800_dep6.jsonl",
    "ruler_niah_mk_2": "ruler/niah_multikey_2/validation_131072.jsonl",
    "ruler_niah_mv": "ruler/niah_multivalue/validation_131072.jsonl",
    "kilt_nq": "kilt/nq-dev-multikilt_1000_k1000_dep6.jsonl",
    "kilt_hotpotqa": "kilt/hotpotqa-dev-multikilt_1000_k1000_dep3.jsonl",
    "kilt_popqa_3": "kilt/popqa_test_1000_k1000_dep6.jsonl",
    "msmarco_rerank_psg": "msmarco/test_reranking_data_k1000_dep3.jsonl",
}


@pytest.mark.parametrize(("task", "k"), HELMET_128K.items())
def test_units_at_128k_are_helmets_main_configs(task, k):
    assert helmet_units(HELMET_TASKS.get(task), 131072) == k


@pytest.mark.parametrize(("task", "k"), {"kilt_nq": 440, "msmarco_rerank_psg": 600, "icl_nlu": 4080}.items())
def test_the_exact_protocol_still_reads_the_64k_file(task, k):
    """Under ``exact`` the data read stays the short configs' largest (the draws of every length)."""
    assert exact_units(HELMET_TASKS.get(task)) == k


@pytest.mark.parametrize(("task", "relative"), HELMET_128K_FILES.items())
def test_protocol_helmet_at_128k_reads_helmets_128k_file(task, relative, tmp_path):
    params = make_helmet_params(
        {"tasks": task, "lengths": "128k", "samples": 4, "data": str(tmp_path), "protocol": "helmet"}
    )
    with pytest.raises(CocaEvalError, match=f"reads HELMET's {relative}"):
        check_methods(params, [])


def test_a_json_kv_prompt_at_128k_is_helmets_text(tmp_path, ruler_tokenizer):
    """HELMET's ``load_json_kv`` text for its k1800 row (``data.py``: the user template, a newline, the
    system template; two demonstrations ``Key: k`` / ``Corresponding value: v``), tokenised whole with
    the tokenizer's special tokens as its ``tokenize()`` does when the prompt fits."""
    row = _kv_row(random.Random(7), 300)
    path = tmp_path / "json_kv" / "test_k1800_dep6.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    tokenizer = ruler_tokenizer("zoo")
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, None), "helmet", Sources(str(tmp_path), 42, 1), tokenizer, None
    )
    (sample,) = builder.build("json_kv", 131072, 1, 42, 131072 - 100)
    demos = "".join(f"Key: {k}\nCorresponding value: {v}\n\n" for k, v in row["demos"][:2])
    text = (
        f"{row['context']}\n\nExtract the value corresponding to the specified key in the JSON object "
        f"below.\n\n{demos}Key: {row['question']}\nCorresponding value:"
    )
    assert sample.ids == tokenizer(text).input_ids
    assert sample.answers == (row["answer"],)
    assert sample.detail["truncated_tokens"] == 0 and sample.detail["pairs"] == 1800
