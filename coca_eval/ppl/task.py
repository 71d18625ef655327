"""The ``ppl`` task: methods x lengths of sliding-window perplexity over sampled documents.

Each cell is journaled per document as it finishes, so an interrupted run resumes mid-cell. A cell that
runs out of memory becomes an ``oom`` cell and the run goes on with the next one. Documents are the
units a split run divides (``--shard``, torchrun); :func:`combine_cell` forms a cell from them anywhere.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ValidationError

from coca_eval.backends.base import ScoringBackend
from coca_eval.data.sampling import TokenDoc, sample_documents
from coca_eval.data.sources import load_documents, source_fingerprint
from coca_eval.distributed.share import WHOLE, Share
from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal, cell_key
from coca_eval.methods import MethodSpec
from coca_eval.ppl.engine import TokenScores, score_tokens
from coca_eval.ppl.params import PplParams
from coca_eval.ppl.positions import position_buckets, window_positions
from coca_eval.ppl.records import DocPart, bits_per_byte, exp_or_inf, score_problem, word_perplexity
from coca_eval.ppl.spec import PPL_TASK_VERSION
from coca_eval.ppl.windows import plan_windows
from coca_eval.progress import CellProgress
from coca_eval.results import Cell


def resolve_bos(policy: str, backend: ScoringBackend) -> str:
    """``auto``: BOS on every window when the tokenizer adds one by default (LLaMA, Gemma), else never."""
    if policy == "auto":
        return "always" if backend.adds_bos else "never"
    if policy != "never" and backend.bos_token_id is None:
        raise CocaEvalError(f"--bos {policy} needs a BOS token, and this tokenizer has none")
    return policy


def ppl_cell_key(method: MethodSpec, weights: str, params: PplParams, length: int) -> str:
    identity = {
        "task": "ppl",
        "version": PPL_TASK_VERSION,
        "method": method.identity(),
        "weights": weights,
        "params": {**params.identity(), "lengths": None, "dataset": source_fingerprint(params.dataset)},
        "length": length,
        "stride": params.effective_stride(length),
    }
    return cell_key(identity)


def _doc_part(doc: TokenDoc, scores: TokenScores, text: str, in_window: np.ndarray) -> dict[str, Any]:
    """The document's record; ``text`` (its kept tokens decoded) gives the byte and word counts that
    bits per byte and word perplexity divide by, ``in_window`` each token's position in the window
    that scored it (the loss-by-position buckets). Every scored token counts, whatever its score: a
    NaN or a log-prob above 0 makes the record an error (with the reason), never a shorter sum."""
    values = scores.values
    problem = score_problem(values, scores.positions)
    total = float(values.sum()) if problem is None else math.nan
    finite = math.isfinite(total)
    part = DocPart(
        doc_id=doc.doc_id,
        nll_sum=total if finite else None,
        tokens=int(values.size),
        bytes=len(text.encode("utf-8")),
        words=len(text.split()),
        error=problem,
        positions=position_buckets(values, in_window[scores.scored]) if finite else None,
    )
    absent = {"error"} if problem is None else set()
    return part.model_dump(exclude=absent if finite else absent | {"positions"})


DOCUMENT_HASHES = "document_hashes"  # context: every document's token hash, so processes that read
# other versions of the data cannot form one cell (merge and the torchrun gather compare contexts)


PartT = TypeVar("PartT", bound=BaseModel)


def _ids_hash(ids) -> str:
    """The hash of a document's scored token ids (what its NLL is a number about)."""
    return hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes()).hexdigest()[:16]


def typed_parts(parts: list[dict], model: type[PartT] = DocPart, kind: str = "part") -> list[PartT]:
    """The parts as ``model`` (:class:`DocPart` by default); a forged or damaged one (a shard file,
    another rank) is one line naming the document and the ``kind`` of part."""
    typed = []
    for index, part in enumerate(parts):
        try:
            typed.append(model.model_validate(part))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the part"
            name = part.get("doc_id", f"unit {index}") if isinstance(part, dict) else f"unit {index}"
            raise CocaEvalError(f"document {name!r}: invalid {kind} at {where}: {first['msg']}") from None
    return typed


def failed_documents(typed: Sequence) -> str | None:
    """``2 of 8 documents have no valid score; doc3: <why>`` when any document's part is an error
    (ppl's and LongPPL's cells alike), else None."""
    failed = [p for p in typed if p.error is not None]
    if not failed:
        return None
    return (
        f"{len(failed)} of {len(typed)} documents have no valid score; {failed[0].doc_id}: {failed[0].error}"
    )


def combine_cell(base: dict, parts: list[dict], context: dict) -> Cell:
    """The cell from every document's part (in document order) and the ``context`` its windows were
    scored under (``stride``, ``mode``, ``bos``, ``doc_tokens``): the spec's ``combine``, so a merged
    or gathered cell is made by this same code without a model.

    A document whose scores are no number (NaN, a log-prob above 0) makes the cell ``error``, naming it;
    one with an infinite NLL makes it ``inf``. ``n`` counts every scored token either way."""
    typed = typed_parts(parts)
    tokens = sum(p.tokens for p in typed)
    context = {key: value for key, value in context.items() if key != DOCUMENT_HASHES}  # checked already
    detail = {"docs": parts, **context}
    base = {**base, "n": tokens}
    if (error := failed_documents(typed)) is not None:
        return Cell(**base, status="error", detail={**detail, "error": error})
    if any(p.nll_sum is None for p in typed):
        return Cell(**base, status="inf", detail=detail)
    nll = sum(p.nll_sum for p in typed)
    per_doc = [exp_or_inf(p.nll_sum / p.tokens) for p in typed]
    detail["ppl_macro"] = float(np.mean(per_doc)) if all(map(math.isfinite, per_doc)) else None
    detail["nll_per_token"] = nll / tokens
    detail["bits_per_byte"] = bits_per_byte(typed)  # tokenizer-independent (lm-eval's numbers)
    detail["word_perplexity"] = word_perplexity(typed)
    value = exp_or_inf(nll / tokens)
    if not math.isfinite(value):
        return Cell(**base, status="inf", detail=detail)
    return Cell(**base, value=value, detail=detail)


def _parts_of_these_docs(parts: dict[str, dict], docs: list[TokenDoc], plans) -> dict[str, dict]:
    """Journaled parts whose index and document id both match (a part of another document is redone),
    that count every token the plan scores and hold a number: an error part (a server that answered
    NaN) and a part an older version journaled with NaN scores dropped (fewer tokens, or ``tokens: 0``)
    are scored again."""
    scored = {str(i): sum(w.n_scored for w in plan) for i, plan in enumerate(plans)}
    return {
        i: part
        for i, part in parts.items()
        if i in scored and _same_doc(part, docs[int(i)]) and _holds_a_number(part, scored[i])
    }


def _same_doc(part: dict | None, doc: TokenDoc) -> bool:
    return isinstance(part, dict) and part.get("doc_id") == doc.doc_id


def _holds_a_number(part: dict, tokens: int) -> bool:
    try:
        typed = DocPart.model_validate(part)
    except ValidationError:
        return False
    return typed.error is None and typed.tokens == tokens


class PplTask:
    """Sliding-window perplexity as a :class:`~coca_eval.runner.CellTask`."""

    name, metric = "ppl", "ppl"

    def __init__(
        self,
        params: PplParams,
        journal: Journal,
        progress: CellProgress,
        batch_size: int = 1,
        share: Share = WHOLE,
    ):
        self.params, self.journal, self.progress, self.batch_size = params, journal, progress, batch_size
        self.dataset, self.share = params.dataset, share
        self._documents = None

    @property
    def documents_loaded(self) -> bool:
        return self._documents is not None

    def documents(self):
        if self._documents is None:
            self._documents = load_documents(self.params.dataset, self.params.text_field)
        return self._documents

    def cell_key(self, method: MethodSpec, weights: str, length: int) -> str:
        return ppl_cell_key(method, weights, self.params, length)

    def prepare(self, method: MethodSpec, backend: ScoringBackend) -> list[TokenDoc]:
        params = self.params
        docs = sample_documents(
            self.documents(),
            backend.encode,
            params.num_docs,
            params.doc_tokens,
            params.seed,
            params.up_to_num_docs,
        )
        return docs[: params.limit] if params.limit else docs

    def evaluate(self, method, backend, docs: list[TokenDoc], length: int, key: str) -> Cell:
        policy = resolve_bos(self.params.bos, backend)
        stride = self.params.effective_stride(length)
        try:
            plans = [plan_windows(len(d.ids), length, stride, policy, self.params.mode) for d in docs]
        except ValueError as exc:
            raise CocaEvalError(str(exc)) from None
        journaled = self.journal.parts.get(key, {})
        finished = _parts_of_these_docs(journaled, docs, plans)
        mine = self.share.owned(len(docs))
        again = [i for i in mine if _same_doc(journaled.get(str(i)), docs[i]) and str(i) not in finished]
        if again:
            self.progress.log(f"{method.label} @ {length}: scoring {len(again)} journaled document(s) again "
                              "(their journaled scores are no number)")  # fmt: skip
        done = sum(len(plans[i]) for i in mine if str(i) in finished)
        self.progress.start_cell(f"{method.label} @ {length}", sum(len(plans[i]) for i in mine), done)
        for i in mine:
            if str(i) not in finished:
                scores = score_tokens(backend, docs[i].ids, plans[i], self.batch_size, self.progress.advance)
                text = backend.tokenizer.decode(docs[i].ids, skip_special_tokens=True)
                in_window = window_positions(plans[i], len(docs[i].ids))
                self.journal.record_part(key, str(i), _doc_part(docs[i], scores, text, in_window))
        parts = {i: self.journal.parts[key][str(i)] for i in mine}
        base = dict(task="ppl", method=method.label, metric="ppl", length=length, dataset=self.dataset)
        context = {
            "stride": stride,
            "mode": self.params.mode,
            "bos": policy,
            "doc_tokens": self.params.doc_tokens,
            DOCUMENT_HASHES: {doc.doc_id: _ids_hash(doc.ids) for doc in docs},
        }
        return self.share.cell(base, parts, len(docs), context, combine_cell)


def check_params(params: PplParams, methods=()) -> None:
    """Fail before any model loads when the dataset cannot be read (any method reads it alike)."""
    from coca_eval.data.sources import check_source

    check_source(params.dataset)


def record_documents(run, runner: PplTask, methods, params: PplParams, **options) -> None:
    """Provenance of the documents the cells average over, in the run's config. A rerun whose cells
    all come from the journal loads no documents on its way, so they are read here: otherwise
    rewriting the output would drop the provenance the first run recorded."""
    used = {d["doc_id"] for c in run.cells for d in _document_parts(c)}
    if used:
        run.config["documents"] = {d.doc_id: d.source for d in runner.documents() if d.doc_id in used}


def _document_parts(cell: Cell) -> list[dict]:
    """A cell's per-document records: all of them, or a shard's own (a ``partial`` cell's parts)."""
    return cell.detail.get("docs") or list(cell.detail.get("parts", {}).values())
