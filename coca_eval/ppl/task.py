"""The ``ppl`` task: methods x lengths of sliding-window perplexity over sampled documents.

Each cell is journaled per document as it finishes, so an interrupted run resumes mid-cell. A cell that
runs out of memory becomes an ``oom`` cell and the run goes on with the next one. Documents are the
units a split run divides (``--shard``, torchrun); :func:`combine_cell` forms a cell from them anywhere.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from coca_eval.backends.base import ScoringBackend
from coca_eval.data.sampling import TokenDoc, sample_documents
from coca_eval.data.sources import load_documents, source_fingerprint
from coca_eval.distributed.share import WHOLE, Share
from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal, cell_key
from coca_eval.methods import MethodSpec
from coca_eval.ppl.engine import score_tokens
from coca_eval.ppl.params import PplParams
from coca_eval.ppl.records import DocPart, bits_per_byte, word_perplexity
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


def _doc_part(doc: TokenDoc, nll: np.ndarray, text: str) -> dict[str, Any]:
    """The document's record; ``text`` (its kept tokens decoded) gives the byte and word counts that
    bits per byte and word perplexity divide by."""
    scored = nll[~np.isnan(nll)]
    total = float(scored.sum())
    part = DocPart(
        doc_id=doc.doc_id,
        nll_sum=total if math.isfinite(total) else None,
        tokens=int(scored.size),
        bytes=len(text.encode("utf-8")),
        words=len(text.split()),
    )
    return part.model_dump()


def combine_cell(base: dict, parts: list[dict], context: dict) -> Cell:
    """The cell from every document's part (in document order) and the ``context`` its windows were
    scored under (``stride``, ``mode``, ``bos``, ``doc_tokens``): the spec's ``combine``, so a merged
    or gathered cell is made by this same code without a model."""
    typed = [DocPart.model_validate(p) for p in parts]
    tokens = sum(p.tokens for p in typed)
    detail = {"docs": parts, **context}
    base = {**base, "n": tokens}
    if any(p.nll_sum is None for p in typed):
        return Cell(**base, status="inf", detail=detail)
    nll = sum(p.nll_sum for p in typed)
    per_doc = [math.exp(p.nll_sum / p.tokens) for p in typed]
    detail["ppl_macro"] = float(np.mean(per_doc)) if all(map(math.isfinite, per_doc)) else None
    detail["nll_per_token"] = nll / tokens
    detail["bits_per_byte"] = bits_per_byte(typed)  # tokenizer-independent (lm-eval's numbers)
    detail["word_perplexity"] = word_perplexity(typed)
    value = math.exp(nll / tokens) if nll / tokens < 700 else math.inf
    if not math.isfinite(value):
        return Cell(**base, status="inf", detail=detail)
    return Cell(**base, value=value, detail=detail)


def _parts_of_these_docs(parts: dict[str, dict], docs: list[TokenDoc]) -> dict[str, dict]:
    """Journaled parts whose index and document id both match (a part of another document is redone)."""
    ids = {str(i): doc.doc_id for i, doc in enumerate(docs)}
    return {i: part for i, part in parts.items() if i in ids and part.get("doc_id") == ids[i]}


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
        finished = _parts_of_these_docs(self.journal.parts.get(key, {}), docs)
        mine = self.share.owned(len(docs))
        done = sum(len(plans[i]) for i in mine if str(i) in finished)
        self.progress.start_cell(f"{method.label} @ {length}", sum(len(plans[i]) for i in mine), done)
        for i in mine:
            if str(i) not in finished:
                nll = score_tokens(backend, docs[i].ids, plans[i], self.batch_size, self.progress.advance)
                text = backend.tokenizer.decode(docs[i].ids, skip_special_tokens=True)
                self.journal.record_part(key, str(i), _doc_part(docs[i], nll, text))
        parts = {i: self.journal.parts[key][str(i)] for i in mine}
        base = dict(task="ppl", method=method.label, metric="ppl", length=length, dataset=self.dataset)
        context = {
            "stride": stride,
            "mode": self.params.mode,
            "bos": policy,
            "doc_tokens": self.params.doc_tokens,
        }
        return self.share.cell(base, parts, len(docs), context, combine_cell)


def check_params(params: PplParams, methods=()) -> None:
    """Fail before any model loads when the dataset cannot be read (any method reads it alike)."""
    from coca_eval.data.sources import check_source

    check_source(params.dataset)


def record_documents(run, runner: PplTask, methods, params: PplParams, **options) -> None:
    """Provenance of the documents the cells average over, in the run's config."""
    if runner.documents_loaded:
        used = {d["doc_id"] for c in run.cells for d in _document_parts(c)}
        run.config["documents"] = {d.doc_id: d.source for d in runner.documents() if d.doc_id in used}


def _document_parts(cell: Cell) -> list[dict]:
    """A cell's per-document records: all of them, or a shard's own (a ``partial`` cell's parts)."""
    return cell.detail.get("docs") or list(cell.detail.get("parts", {}).values())
