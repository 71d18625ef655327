"""The ``longppl`` cells of ``coca-eval ppl --metric longppl`` (see :mod:`coca_eval.ppl.longppl.keys`).

A cell at length L reads each sampled document's first L tokens as one text (a BOS, where the policy
puts one, comes in front: the text, which the key spans are offsets into, does not depend on it). The key
spans of a text come from, in this order of preference: a results file of an earlier longppl run
(``--key-tokens``: the paper's protocol of scoring several models on one key-token set), the evaluator
model (``--evaluator-model``: found once per text and shared by every method of the run), or the
evaluated model itself. Each document's part, journaled as it finishes, stores its key spans as JSON
(character offsets, never code), so the cell's key tokens can score any other model later.

Documents are the units a split run divides; :func:`combine_longppl_cell` forms a cell from them.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from coca_eval.errors import CocaEvalError
from coca_eval.journal import cell_key
from coca_eval.methods import MethodSpec
from coca_eval.ppl.longppl.keys import Span, find_key_spans, score_on_spans, tokenize_with_offsets
from coca_eval.ppl.longppl.params import LongPplParams
from coca_eval.ppl.longppl.records import SELF_JUDGED, KeySpans, LongPplPart
from coca_eval.ppl.records import exp_or_inf
from coca_eval.ppl.task import DOCUMENT_HASHES, PplTask, _ids_hash, failed_documents, resolve_bos, typed_parts
from coca_eval.results import Cell

LONGPPL_TASK_VERSION = 1
PROBE_TEXT = "Alignment probe: two tokenizers, one text."
JUDGED = ("ok", "inf", "error")  # cell statuses whose documents all have key spans (not oom, partial)


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def typed_longppl_parts(parts: list[dict]) -> list[LongPplPart]:
    """The parts typed; a forged or damaged one (a shard file, another rank) is one line."""
    return typed_parts(parts, LongPplPart, "longppl part")


def combine_longppl_cell(base: dict, parts: list[dict], context: dict) -> Cell:
    """LongPPL = exp(all key tokens' NLL / their count) over the documents (a token micro-average, as
    ppl's); ``n`` counts the key tokens. No key token at all is an ``error`` cell (LongPPL undefined:
    the texts are too short for the short context), never a value."""
    typed = typed_longppl_parts(parts)
    context = {key: value for key, value in context.items() if key != DOCUMENT_HASHES}
    keys, tokens = sum(p.key_tokens for p in typed), sum(p.tokens for p in typed)
    detail: dict[str, Any] = {"docs": parts, **context, "tokens": tokens}
    base = {**base, "n": keys}
    if (error := failed_documents(typed)) is not None:
        return Cell(**base, status="error", detail={**detail, "error": error})
    if keys == 0:
        detail["error"] = (
            f"no key tokens in {len(typed)} documents: no token's loss was below {context.get('bound')} "
            f"nats with the full context and more than {context.get('margin')} nats higher with a short "
            f"one (texts of at most {context.get('short')} tokens have none); LongPPL is undefined"
        )
        return Cell(**base, status="error", detail=detail)
    detail["key_fraction"] = keys / tokens
    if any(p.nll_sum is None for p in typed):
        detail["ppl"] = None
    else:
        detail["ppl"] = exp_or_inf(sum(p.nll_sum for p in typed) / tokens)
    if any(p.key_nll_sum is None for p in typed):
        return Cell(**base, status="inf", detail=detail)
    with_keys = [p for p in typed if p.key_tokens]
    detail["longppl_macro"] = sum(exp_or_inf(p.key_nll_sum / p.key_tokens) for p in with_keys) / len(
        with_keys
    )
    value = exp_or_inf(sum(p.key_nll_sum for p in typed) / keys)
    if not math.isfinite(value):
        return Cell(**base, status="inf", detail=detail)
    return Cell(**base, value=value, detail=detail)


def stored_key_spans(path: str) -> dict[tuple[int, str], KeySpans]:
    """The key spans of an earlier longppl run's results file, by (length, document id). Read as JSON
    data only: nothing in the file is ever executed; every refusal names the file.

    Every cell whose documents were all judged counts, not only those with a value: a cell with no key
    token (an ``error`` cell, as every length up to the short context is) holds an empty key-token set,
    and a candidate must be scored on that too for its cells to pair with the baseline's. Only the spans
    and the text they index are read (see :class:`KeySpans`)."""
    prefix = f"--key-tokens {path}"
    try:
        run = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CocaEvalError(f"{prefix}: not a longppl results file ({exc})") from None
    cells = run.get("cells") if isinstance(run, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise CocaEvalError(f"{prefix}: not a longppl results file (its cells are not a list of cells)")
    found = {}
    for number, cell in enumerate(cells):
        docs = cell.get("detail", {}).get("docs") if isinstance(cell.get("detail"), dict) else None
        if cell.get("task") != "longppl" or cell.get("status") not in JUDGED or not docs:
            continue
        try:
            length = int(cell["length"])
            for part in docs:
                spans = KeySpans.model_validate(part)
                found[(length, spans.doc_id)] = spans
        except (ValidationError, ValueError, KeyError, TypeError) as exc:
            reason = str(exc).splitlines()[0] if not isinstance(exc, ValidationError) else _first(exc)
            raise CocaEvalError(f"{prefix}: cells.{number} has no valid key spans ({reason})") from None
    if not found:
        raise CocaEvalError(f"{prefix}: holds no finished longppl cell")
    return found


def _first(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


class LongPplTask(PplTask):
    """LongPPL as a :class:`~coca_eval.runner.CellTask` (documents sampled as the ppl task samples them)."""

    name, metric = "longppl", "longppl"

    def __init__(self, params: LongPplParams, *args, **kwargs):
        super().__init__(params, *args, **kwargs)
        self._evaluator = None
        self._evaluator_weights: str | None = None
        self._stored = stored_key_spans(params.key_tokens) if params.key_tokens else None
        self._key_tokens_sha = None
        if params.key_tokens:
            self._key_tokens_sha = hashlib.sha256(Path(params.key_tokens).read_bytes()).hexdigest()[:16]

    def evaluator_weights(self) -> str | None:
        if self.params.evaluator_model is None:
            return None
        if self._evaluator_weights is None:
            from coca_eval.models.presets import model_fingerprint

            self._evaluator_weights = model_fingerprint(self.params.evaluator_model)
        return self._evaluator_weights

    def cell_key(self, method: MethodSpec, weights: str, length: int) -> str:
        identity = {
            "task": "longppl",
            "version": LONGPPL_TASK_VERSION,
            "method": method.identity(),
            "weights": weights,
            "evaluator_weights": self.evaluator_weights(),
            "key_tokens_file": self._key_tokens_sha,  # a rewritten file is not the same key-token set
            "params": {**self.params.identity(), "lengths": None, "dataset": self._fingerprint()},
            "length": length,
        }
        return cell_key(identity)

    def _fingerprint(self) -> str:
        from coca_eval.data.sources import source_fingerprint

        return source_fingerprint(self.params.dataset)

    def _spans_key(self, length: int, evaluator_bos: bool) -> str:
        """The journal key of a shared evaluator's spans: they do not depend on the evaluated method."""
        identity = {
            "task": "longppl-keys",
            "version": LONGPPL_TASK_VERSION,
            "evaluator_weights": self.evaluator_weights(),
            "evaluator": self.params.evaluator_model,
            "params": {**self.params.identity(), "lengths": None, "dataset": self._fingerprint()},
            "length": length,
            "bos": evaluator_bos,
        }
        return cell_key(identity)

    def evaluator_for(self, method: MethodSpec, backend):
        """The evaluator backend (loaded once, on the evaluated model's device, in its dtype), after
        checking that both tokenizers can be aligned through character offsets."""
        tokenize_with_offsets(backend.tokenizer, PROBE_TEXT, False, "evaluated")
        if self.params.evaluator_model is None:
            return backend
        if self._evaluator is None:
            from coca_eval.backends.hf import load_hf_backend

            device = str(getattr(backend, "device", "cpu"))
            spec = MethodSpec(model=self.params.evaluator_model, label="evaluator", dtype=method.dtype)
            self._evaluator = load_hf_backend(spec, device=device)
        tokenize_with_offsets(self._evaluator.tokenizer, PROBE_TEXT, False, "evaluator")
        return self._evaluator

    def _key_spans(self, index: int, doc_id: str, text: str, length: int, evaluator, evaluator_bos: bool):
        if self._stored is not None:
            stored = self._stored.get((length, doc_id))
            if stored is None or stored.text_sha != text_sha(text):
                raise CocaEvalError(
                    f"--key-tokens {self.params.key_tokens} has no key spans for document {doc_id!r} at "
                    f"length {length} over the same text"
                )
            return [tuple(s) for s in stored.spans]
        if self.params.evaluator_model is None:
            return find_key_spans(evaluator, text, self.params.rule(), evaluator_bos)
        key = self._spans_key(length, evaluator_bos)
        saved = _saved_spans(self.journal.parts.get(key, {}).get(str(index)), text)
        if saved is not None:
            return saved
        spans = find_key_spans(evaluator, text, self.params.rule(), evaluator_bos)
        self.journal.record_part(
            key, str(index), {"text_sha": text_sha(text), "spans": [list(s) for s in spans]}
        )
        return spans

    def _document_part(self, doc, text: str, spans: list[Span], backend, bos: bool) -> dict:
        score = score_on_spans(backend, text, spans, bos)
        part = dict(
            doc_id=doc.doc_id,
            text_sha=text_sha(text),
            spans=[list(s) for s in spans],
            key_tokens=score.key_tokens,
            key_nll_sum=_finite_or_none(score.key_nll_sum),
            tokens=score.tokens,
            nll_sum=_finite_or_none(score.nll_sum),
        )
        if score.problem is not None:
            part.update(key_nll_sum=None, nll_sum=None, error=score.problem)
        return part

    def evaluate(self, method, backend, docs, length: int, key: str) -> Cell:
        policy = resolve_bos(self.params.bos, backend)
        evaluator = self.evaluator_for(method, backend)
        evaluator_bos = resolve_bos(self.params.bos, evaluator) != "never"
        bos = policy != "never"
        journaled = self.journal.parts.get(key, {})
        mine = self.share.owned(len(docs))
        finished = {i for i in mine if _journaled_ok(journaled.get(str(i)), docs[i].doc_id)}
        self.progress.start_cell(f"{method.label} @ {length} (LongPPL)", len(mine), len(finished))
        for i in mine:
            if i in finished:
                continue
            text = backend.tokenizer.decode(docs[i].ids[:length], skip_special_tokens=True)
            spans = self._key_spans(i, docs[i].doc_id, text, length, evaluator, evaluator_bos)
            self.journal.record_part(key, str(i), self._document_part(docs[i], text, spans, backend, bos))
            self.progress.advance(1)
        parts = {i: self.journal.parts[key][str(i)] for i in mine}
        base = dict(
            task="longppl", method=method.label, metric="longppl", length=length, dataset=self.dataset
        )
        rule = self.params.rule()
        context = {
            "mode": "truncated",
            "bos": policy,
            "doc_tokens": self.params.doc_tokens,
            "evaluator": self.params.evaluator_model or SELF_JUDGED,
            "key_tokens_from": self.params.key_tokens,
            **({"key_tokens_content": self._key_tokens_sha} if self._key_tokens_sha else {}),
            "short": rule.short,
            "step": rule.step,
            "bound": rule.bound,
            "margin": rule.margin,
            DOCUMENT_HASHES: {doc.doc_id: _ids_hash(doc.ids) for doc in docs},
        }
        return self.share.cell(base, parts, len(docs), context, combine_longppl_cell)


def _saved_spans(saved: Any, text: str) -> list[Span] | None:
    """A shared evaluator's journaled spans for this very text, or None (absent, or not spans)."""
    if not isinstance(saved, dict) or saved.get("text_sha") != text_sha(text):
        return None
    spans = saved.get("spans")
    valid = isinstance(spans, list) and all(
        isinstance(s, list) and len(s) == 2 and all(type(v) is int for v in s) and 0 <= s[0] <= s[1]
        for s in spans
    )
    return [(s[0], s[1]) for s in spans] if valid else None


def check_longppl(params: LongPplParams, methods=()) -> None:
    """Fail before any model loads: the dataset must be readable, and the evaluator's tokenizer and
    those of the hf methods must give character offsets (else no key token can be matched)."""
    from coca_eval.ppl.task import check_params

    check_params(params, methods)
    models = [(m.model, "evaluated") for m in methods if m.backend == "hf"]
    if params.evaluator_model is not None and params.key_tokens is None:
        models.append((params.evaluator_model, "evaluator"))
    for model, role in dict(models).items():
        tokenize_with_offsets(_tokenizer_of(model), PROBE_TEXT, False, role)


def _tokenizer_of(model: str):
    from transformers import AutoTokenizer

    from coca_eval.models.presets import resolve_model

    path, _ = resolve_model(model)
    try:
        return AutoTokenizer.from_pretrained(path, trust_remote_code=False)
    except (OSError, ValueError, KeyError) as exc:
        raise CocaEvalError(f"cannot load the tokenizer of {model!r}: {str(exc).splitlines()[0]}") from None


def _journaled_ok(part: Any, doc_id: str) -> bool:
    """A journaled part of this document holding a number (an error part is scored again)."""
    try:
        typed = LongPplPart.model_validate(part)
    except ValidationError:
        return False
    return typed.doc_id == doc_id and typed.error is None
