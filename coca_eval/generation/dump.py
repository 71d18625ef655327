"""``--dump-prompts DIR``: what exactly the model saw, one JSON line per sample, written when the run
ends: ``method``, ``task``, ``length``, ``index``, ``prompt`` (the text of the prompt's tokens, special
tokens and the rendered chat template included), ``prompt_tokens`` (their count), ``prompt_ids`` (the
tokens themselves) and ``answers`` (the references).

The ids are the record, the text their reading: an exact-length prompt is assembled from pieces
tokenised apart (template, needles, filler), and the text tokenised again as one string may merge
across a piece boundary into a token or so fewer or more (on SmolLM2's tokenizer: 2 of 22 RULER
prompts, by one token; json_kv's prompts by 9-24 of ~1-2k), so re-running a prompt elsewhere takes
``prompt_ids``.

The prompts are rebuilt from the tokenizer alone, by the family's own prompt builder, for every sample
the run's cells hold (a resumed cell's too, which this process never decoded), so a dump changes
nothing in the run and needs no model. The file is ``DIR/<task>.jsonl`` (a shard's
``DIR/<task>.<shard-K-of-N>.jsonl``), written whole and atomically.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.files import write_atomic
from coca_eval.methods import MethodSpec
from coca_eval.results import Cell, Run


class TokenizerOnly:
    """What a family's ``prepare`` needs of a backend to build prompts, without loading weights."""

    position_limit = None

    def __init__(self, model: str) -> None:
        from transformers import AutoTokenizer

        from coca_eval.backends.special_tokens import tokenizer_adds_bos
        from coca_eval.models.presets import resolve_model

        self.tokenizer = AutoTokenizer.from_pretrained(resolve_model(model)[0], trust_remote_code=False)
        self.bos_token_id = self.tokenizer.bos_token_id
        self.adds_bos = tokenizer_adds_bos(self.tokenizer)

    def encode(self, text: str) -> list[int]:
        from coca_eval.backends.special_tokens import encode_plain

        return encode_plain(self.tokenizer, text)

    def text_of(self, ids: list[int]) -> str:
        """The tokens as text, special tokens and spacing as they are."""
        return self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def check_dump_folder(directory: Path | None) -> None:
    """Refuse, before any model loads, a ``--dump-prompts`` that is not a folder one can write in."""
    if directory is None:
        return
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise CocaEvalError(
            f"--dump-prompts {directory}: not a folder (give a folder to write the prompts in)"
        )


def cell_indices(cell: Cell) -> list[int]:
    """The sample indices a cell holds: a whole cell's samples, or a shard's parts."""
    if cell.status == "ok":
        return [int(sample["index"]) for sample in cell.detail.get("samples") or []]
    if cell.status == "partial":
        return sorted(int(i) for i in (cell.detail.get("parts") or {}))
    return []


def prompt_rows(
    method: str, task: str, samples: Sequence[Any], indices: Iterable[int], length: int, decode
) -> list[dict]:
    """One row per sample of ``indices`` (``samples`` by index: the builder's, with ``ids`` and
    ``answers``); ``task`` is the cell's (HELMET's ``ruler_niah_mk_2``, whose samples RULER's task
    definition builds under RULER's name)."""
    rows = []
    for index in indices:
        sample = samples[index]
        rows.append(
            {
                "method": method,
                "task": task,
                "length": length,
                "index": index,
                "prompt": decode(sample.ids),
                "prompt_tokens": len(sample.ids),
                "prompt_ids": list(sample.ids),
                "answers": list(sample.answers),
            }
        )
    return rows


def dump_file(directory: Path, task: str, tag: str | None) -> Path:
    return directory / (f"{task}.{tag}.jsonl" if tag else f"{task}.jsonl")


def write_prompt_dump(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def dump_run_prompts(runner: Any, run: Run, methods: Sequence[MethodSpec], directory: Path) -> Path:
    """Every sample of ``run``'s cells as a prompt row, built by ``runner`` (a family's cell runner:
    ``prepare(method, backend)`` and ``build_samples(state, dataset, length)``)."""
    rows = []
    for method in methods:
        cells = [c for c in run.cells if c.method == method.label and cell_indices(c)]
        if not cells:
            continue
        backend = TokenizerOnly(method.model)
        state, decode = runner.prepare(method, backend), backend.text_of
        for cell in cells:
            samples = runner.build_samples(state, cell.dataset, cell.length - _thought_room(runner, cell))
            task = cell.dataset or runner.name
            rows += prompt_rows(method.label, task, samples, cell_indices(cell), cell.length, decode)
    path = dump_file(directory, runner.name, runner.share.journal_tag)
    write_prompt_dump(rows, path)
    return path


def _thought_room(runner: Any, cell) -> int:
    """The tokens of the cell's N its thought took (``--length-counts prompt+answer+thought``): the
    samples were built that much shorter (:func:`coca_eval.generation.thinking.thought_room`)."""
    from coca_eval.generation.params import WITH_THOUGHT

    counts = getattr(runner.params, "length_counts", None)
    return int(cell.detail.get("think_budget") or 0) if counts == WITH_THOUGHT else 0
