"""``--protocol helmet`` builds HELMET's RAG prompts token for token: the ids HELMET's own ``load_qa`` and
``tokenize()`` built for the files of ``helmet_files.py`` (``data/helmet_prompts.json``, made outside the
project by ``scripts/helmet_prompt_ids.py`` at the commit it records) are ours, sample by sample: the
same questions in the same order, the same demonstrations, the same cut, chat template on and off."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from coca_eval.chat import chat_frame
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources
from tests.helmet.helmet_files import write_data_dir
from tests.ruler.conftest import SIMPLE_TEMPLATE

HELMET = json.loads((Path(__file__).parent / "data" / "helmet_prompts.json").read_text(encoding="utf-8"))
CASES = [
    pytest.param(c, id=f"{c['task']}-s{c['sentences']}-{c['length']}-{'chat' if c['chat'] else 'base'}")
    for c in HELMET["cases"]
]


def _summary(ids: list[int]) -> dict:
    """What the reference keeps of a prompt: its length, digest, first and last tokens."""
    digest = hashlib.sha256(json.dumps(ids).encode()).hexdigest()
    return {"tokens": len(ids), "sha256": digest, "head": ids[:12], "tail": ids[-12:]}


@pytest.fixture(scope="module")
def data_dirs(tmp_path_factory) -> dict[int, Path]:
    root = tmp_path_factory.mktemp("helmet-data")
    return {n: write_data_dir(root / f"s{n}", n) for n in (3, 5)}


def test_the_reference_comes_from_the_commit_the_docs_name():
    assert HELMET["helmet_commit"] == "4526dfbdc512bd9ff721da336bff4e3e75ecfd27"
    cut = [c for c in HELMET["cases"] if c["sentences"] == 5]
    assert cut and all(p["tokens"] == c["length"] - 20 for c in cut for p in c["prompts"])  # HELMET cut these
    whole = [c for c in HELMET["cases"] if c["sentences"] == 3]
    assert whole and all(p["tokens"] < c["length"] - 20 for c in whole for p in c["prompts"])


@pytest.mark.parametrize("case", CASES)
def test_prompt_ids_equal_helmets(case, data_dirs, ruler_tokenizer, tmp_path):
    tokenizer = ruler_tokenizer("zoo")
    template = tmp_path / "simple.jinja"
    template.write_text(SIMPLE_TEMPLATE, encoding="utf-8")
    chat = chat_frame(str(template), tokenizer) if case["chat"] else None
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    sources = Sources(str(data_dirs[case["sentences"]]), 42, 4)
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, chat),
        "helmet",
        sources,
        tokenizer,
        SIMPLE_TEMPLATE if chat else None,
    )
    length = case["length"]
    samples = builder.build(case["task"], length, 4, 42, length - 20)
    ours = [_summary(s.ids) for s in samples]
    theirs = [{k: p[k] for k in ("tokens", "sha256", "head", "tail")} for p in case["prompts"]]
    assert ours == theirs
    cut = [s.detail["truncated_tokens"] for s in samples]
    assert all(c > 0 for c in cut) if case["sentences"] == 5 else not any(cut)


ICL_CASES = [
    pytest.param(c, id=f"{c['task']}-{c['length']}-{'chat' if c['chat'] else 'base'}") for c in HELMET["icl"]
]


@pytest.fixture(scope="module")
def icl_dir(tmp_path_factory) -> Path:
    from tests.helmet.helmet_files import write_icl_dir

    return write_icl_dir(tmp_path_factory.mktemp("helmet-icl"))


@pytest.mark.parametrize("case", ICL_CASES)
def test_icl_prompt_ids_equal_helmets(case, icl_dir, ruler_tokenizer, tmp_path):
    """HELMET's balanced choice of questions and demonstrations, its label permutation per question and
    NLU's 90/10 split, through to the ids."""
    tokenizer = ruler_tokenizer("zoo")
    template = tmp_path / "simple.jinja"
    template.write_text(SIMPLE_TEMPLATE, encoding="utf-8")
    chat = chat_frame(str(template), tokenizer) if case["chat"] else None
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    sources = Sources(str(icl_dir), 42, 12)
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, chat),
        "helmet",
        sources,
        tokenizer,
        SIMPLE_TEMPLATE if chat else None,
    )
    samples = builder.build(case["task"], case["length"], 12, 42, case["length"] - 20)
    ours = [{"answer": s.answers[0], **_summary(s.ids)} for s in samples]
    theirs = [{k: p[k] for k in ("answer", "tokens", "sha256", "head", "tail")} for p in case["prompts"]]
    assert ours == theirs


RERANK_CASES = [
    pytest.param(c, id=f"n{c['samples']}-{c['length']}-{'chat' if c['chat'] else 'base'}")
    for c in HELMET["rerank"]
]


@pytest.mark.parametrize("case", RERANK_CASES)
def test_rerank_prompt_ids_and_references_equal_helmets(case, ruler_tokenizer, tmp_path):
    """HELMET's queries, its demonstrations (each question's own qid left out, or every test qid at once
    when the demonstration file is over twice the test set) and the relevance labels scored against."""
    from tests.helmet.helmet_files import write_rerank_dir

    tokenizer = ruler_tokenizer("zoo")
    template = tmp_path / "simple.jinja"
    template.write_text(SIMPLE_TEMPLATE, encoding="utf-8")
    chat = chat_frame(str(template), tokenizer) if case["chat"] else None
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    sources = Sources(str(write_rerank_dir(tmp_path / "data")), 42, case["samples"])
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, chat),
        "helmet",
        sources,
        tokenizer,
        SIMPLE_TEMPLATE if chat else None,
    )
    samples = builder.build("msmarco_rerank_psg", case["length"], case["samples"], 42, case["length"] - 200)
    ours = [{"references": list(s.answers), **_summary(s.ids)} for s in samples]
    theirs = [{k: p[k] for k in ("references", "tokens", "sha256", "head", "tail")} for p in case["prompts"]]
    assert ours == theirs


RECALL_CASES = [
    pytest.param(c, id=f"{c['task']}-{c['length']}-{'chat' if c['chat'] else 'base'}")
    for c in HELMET["recall"]
]


@pytest.mark.parametrize("case", RECALL_CASES)
def test_recall_prompt_ids_and_references_equal_helmets(case, ruler_tokenizer, tmp_path):
    """HELMET's generated recall files (json_kv's objects and demonstrations, RULER's rows in HELMET's
    wording of RULER's templates), its shuffled choice of rows and its cut."""
    from tests.helmet.helmet_files import write_recall_dir

    tokenizer = ruler_tokenizer("zoo")
    template = tmp_path / "simple.jinja"
    template.write_text(SIMPLE_TEMPLATE, encoding="utf-8")
    chat = chat_frame(str(template), tokenizer) if case["chat"] else None
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    sources = Sources(str(write_recall_dir(tmp_path / "data")), 42, 4)
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, chat),
        "helmet",
        sources,
        tokenizer,
        SIMPLE_TEMPLATE if chat else None,
    )
    budget = {"json_kv": 100}.get(case["task"], 50)
    samples = builder.build(case["task"], case["length"], 4, 42, case["length"] - budget)
    ours = [{"references": list(s.answers), **_summary(s.ids)} for s in samples]
    theirs = [{k: p[k] for k in ("references", "tokens", "sha256", "head", "tail")} for p in case["prompts"]]
    assert ours == theirs
