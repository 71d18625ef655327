"""The exact protocol lays out HELMET's units as HELMET renders them: json_kv's object as the
lost-in-the-middle key-value prompt HELMET cites (``format_kv_prompt``: ``{`` before the first pair,
``,\\n`` after each but the last, a space before each later one, ``}``), its demonstrations as HELMET's
``load_json_kv`` renders its file's (what ``--protocol helmet`` reads, held to HELMET's ids in
test_helmet_protocol.py), and the units a sample records are those its prompt holds."""

from __future__ import annotations

import json
import re

from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources
from coca_eval.helmet.recall_files import KvRow, kv_fields
from tests.helmet.helmet_files import write_recall_dir

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
INSTRUCTION = "\n\nExtract the value corresponding to the specified key in the JSON object below.\n\n"


def _exact(tokenizer):
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    return HelmetPromptBuilder(ExactPromptBuilder(encode, tokenizer.bos_token_id, None))


def _litm_object(pairs: list[tuple[str, str]]) -> str:
    """lost-in-the-middle's ``format_kv_prompt`` layout of ``pairs``, the closing brace left off."""
    text = ""
    for index, (key, value) in enumerate(pairs):
        text += ("{" if index == 0 else " ") + f'"{key}": "{value}"'
        text += ",\n" if index != len(pairs) - 1 else ""
    return text


def _hex_blanked(text: str) -> str:
    return re.sub("[0-9a-f]", "x", text)


_BLANK = "00000000-0000-0000-0000-000000000000"
_LATER_PAIR = _hex_blanked(f',\n "{_BLANK}": "{_BLANK}"')
_PARTS = {_LATER_PAIR[:n] for n in range(len(_LATER_PAIR))}  # a later pair cut short (never whole)


def _json_kv_samples(ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    for sample in _exact(tokenizer).build("json_kv", 2000, 4, 11, 1900):
        yield sample, tokenizer.decode(sample.ids, skip_special_tokens=True)


def test_json_kvs_object_is_laid_out_as_helmets_key_value_prompt(ruler_tokenizer):
    for sample, text in _json_kv_samples(ruler_tokenizer):
        context = text.split(INSTRUCTION)[0]
        pairs = re.findall(f'"({UUID})": "({UUID})"', context)
        whole = _litm_object(pairs)
        assert context.startswith(whole) and context.endswith("}")
        cut = context[len(whole) : -1]  # the last distractor, cut to the token
        assert _hex_blanked(cut) in _PARTS, "the object ends in one pair cut short"
        assert sample.detail["pairs"] == len(pairs)
        assert sample.answers[0] in dict(pairs).values()


def test_json_kvs_demonstrations_read_as_helmets(ruler_tokenizer):
    for _, text in _json_kv_samples(ruler_tokenizer):
        question = text.split(INSTRUCTION)[1]
        demos = re.findall(f'Key: ("{UUID}")\nCorresponding value: ({UUID})', question)
        assert len(demos) == 2
        fields, _ = kv_fields((KvRow(context="", question="", answer="", demos=demos),), 0, 2)
        key = re.search(f'Key: ("{UUID}")$', question.removesuffix("\nCorresponding value:"))
        assert key is not None
        assert question == fields["demos"] + f"Key: {key.group(1)}\nCorresponding value:"


def test_the_helmet_protocol_records_json_kvs_pairs_from_its_file(ruler_tokenizer, tmp_path):
    tokenizer = ruler_tokenizer("zoo")
    data = write_recall_dir(tmp_path / "data")
    rows = [json.loads(line) for line in (data / "json_kv/test_k105_dep6.jsonl").read_text().splitlines()]
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, None), "helmet", Sources(str(data), 42, 2), tokenizer, None
    )
    samples = builder.build("json_kv", 8192, 2, 42, 8192 - 100)
    assert [s.detail["pairs"] for s in samples] == [rows[0]["num_kvs"]] * 2 == [105, 105]


def _rag_samples(ruler_tokenizer, tmp_path, length: int = 3000, samples: int = 4):
    from tests.helmet.helmet_files import write_data_dir

    tokenizer = ruler_tokenizer("zoo")
    data = write_data_dir(tmp_path / "data", 3)
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    sources = Sources(str(data), 42, samples)
    builder = HelmetPromptBuilder(ExactPromptBuilder(encode, None, None), "exact", sources, tokenizer, None)
    rows = {}
    for path in (data / "kilt").glob("nq-dev-*_k440_*.jsonl"):
        rows = {r["question"]: r for r in map(json.loads, path.read_text().splitlines())}
    for sample in builder.build("kilt_nq", length, samples, 7, length - 20):
        text = tokenizer.decode(sample.ids, skip_special_tokens=True)
        question = text.rsplit("\n\nQuestion: ", 1)[1].removesuffix("\nAnswer:")
        yield sample, text.rsplit("\n\nQuestion: ", 1)[0], rows[question]


def test_rag_passages_are_laid_out_as_helmets_each_once_the_others_in_the_retrievers_order(
    ruler_tokenizer, tmp_path
):
    """HELMET joins a question's passages with a blank line (``"\\n\\n".join`` in its ``load_qa``): the
    context here is that rendering of the gold passage and the retriever's first others, the last
    of them cut to the token."""
    passage = "Document (Title: {title}): {text}"
    for sample, head, row in _rag_samples(ruler_tokenizer, tmp_path):
        rendered = [passage.format(**p) for p in row["ctxs"]]
        start = min(head.find(r) for r in rendered if r in head)
        assert head[start - 2 : start] == "\n\n" and head[start - 3] != "\n"  # one blank line before it
        pieces = re.split(r"\n\n(?=Document \(Title: )", head[start:])
        whole = [p for p in pieces if p in rendered]
        cut = [p for p in pieces if p not in rendered]
        assert len(cut) <= 1 and all(any(r.startswith(c) for r in rendered) for c in cut)
        gold = [r for r, p in zip(rendered, row["ctxs"], strict=True) if p["has_answer"]]
        assert [p for p in whole if p in gold] == gold  # the gold passage, once
        others = [p for p in whole if p not in gold]
        retriever = [r for r in rendered if r not in gold]
        assert others == retriever[: len(others)]
        assert sample.detail["passages"] == len(whole)
