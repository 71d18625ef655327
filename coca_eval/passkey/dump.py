"""``--dump-samples``: one JSONL line per sample with its prompt token ids, for inspection and for
re-running a sample elsewhere. Prompts are rebuilt from the tokenizer alone (no model load)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from coca_eval.files import write_atomic
from coca_eval.methods import MethodSpec
from coca_eval.passkey.params import PasskeyParams
from coca_eval.passkey.task import build_prompts, prompt_builder
from coca_eval.results import Run


class _TokenizerOnly:
    """What :func:`prompt_builder` needs from a backend, without loading weights."""

    def __init__(self, path: str) -> None:
        from transformers import AutoTokenizer

        from coca_eval.backends.special_tokens import tokenizer_adds_bos

        self.tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        self.bos_token_id = self.tokenizer.bos_token_id
        self.adds_bos = tokenizer_adds_bos(self.tokenizer)

    def encode(self, text: str) -> list[int]:
        from coca_eval.backends.special_tokens import encode_plain

        return encode_plain(self.tokenizer, text)


def write_sample_dump(run: Run, methods: Sequence[MethodSpec], params: PasskeyParams, path: Path) -> None:
    from coca_eval.models.presets import resolve_model

    by_label = {m.label: m for m in methods}
    builders = {}
    lines = []
    for cell in run.cells:
        if cell.status not in ("ok", "partial"):
            continue
        method = by_label[cell.method]
        if method.model not in builders:
            builders[method.model] = prompt_builder(
                params, _TokenizerOnly(resolve_model(method.model)[0]), method.model
            )
        prompts = build_prompts(params, builders[method.model], cell.length)
        samples = (
            cell.detail["samples"] if cell.status == "ok" else cell.detail["parts"].values()
        )  # a shard's
        for sample in samples:
            record = {
                "method": cell.method,
                "length": cell.length,
                **sample,
                "prompt_ids": prompts[sample["index"]].ids,
            }
            lines.append(json.dumps(record))
    write_atomic(path, "\n".join(lines) + "\n")


def dump_hook(
    run: Run, runner, methods, params: PasskeyParams, dump_samples: Path | None = None, **_
) -> None:
    """The task's ``finish`` hook: write the dump when ``dump_samples`` names a file."""
    if dump_samples is not None:
        write_sample_dump(run, methods, params, Path(dump_samples))
