"""The shared cell runner of the analyses: documents in, one journaled part per document, one cell out.

A cell is (method, length): the first ``length`` tokens of each sampled document (BOS first where the
tokenizer adds one), each read by one decoder forward under the analysis' hooks. The per-document
reduction (sums and counts, never activations) is journaled as a part, so an interrupted run resumes
at the next document, as ``ppl`` does; the cell combines the parts. Documents are the units a split
run divides (``--shard``, torchrun); :func:`combine_cell` forms a cell from them anywhere.
"""

from __future__ import annotations

from typing import Any, Protocol

from coca_eval.analyses.capture import attention_modules
from coca_eval.analyses.params import AnalysisParams
from coca_eval.data.sampling import TokenDoc, sample_documents
from coca_eval.data.sources import load_documents, source_fingerprint
from coca_eval.distributed.share import WHOLE, Share
from coca_eval.journal import Journal, cell_key
from coca_eval.methods import MethodSpec
from coca_eval.progress import CellProgress
from coca_eval.results import Cell

ANALYSIS_VERSION = 1


class Analysis(Protocol):
    """One analysis: ``measure`` reduces one document to a JSON part, ``combine`` parts to a cell
    (``base`` holds the cell's task, method, metric, length and dataset)."""

    name: str
    metric: str

    def measure(self, backend: Any, ids: list[int], params: AnalysisParams, advance) -> dict: ...

    def combine(self, base: dict, parts: list[dict], params: AnalysisParams) -> Cell: ...


def window_ids(doc: TokenDoc, length: int, bos: int | None) -> list[int]:
    """``length`` tokens: BOS then the document's first ``length - 1``, or the first ``length``."""
    return [bos, *doc.ids[: length - 1]] if bos is not None else doc.ids[:length]


class AnalysisTask:
    """An :class:`Analysis` as a :class:`~coca_eval.runner.CellTask`."""

    dataset: str | None

    def __init__(
        self,
        analysis: Analysis,
        params: AnalysisParams,
        journal: Journal,
        progress: CellProgress,
        share: Share = WHOLE,
    ):
        self.analysis, self.params, self.journal, self.progress = analysis, params, journal, progress
        self.name, self.metric, self.dataset = analysis.name, analysis.metric, params.dataset
        self.share = share
        self._documents = None

    def cell_key(self, method: MethodSpec, weights: str, length: int) -> str:
        identity = {
            "task": self.name,
            "version": ANALYSIS_VERSION,
            "method": method.identity(),
            "weights": weights,
            "params": {**self.params.identity(), "lengths": None},
            "dataset": source_fingerprint(self.params.dataset),
            "length": length,
        }
        return cell_key(identity)

    def prepare(self, method: MethodSpec, backend: Any) -> list[TokenDoc]:
        if self._documents is None:
            self._documents = load_documents(self.params.dataset, self.params.text_field)
        p = self.params
        return sample_documents(self._documents, backend.encode, p.num_docs, p.doc_tokens, p.seed)

    def evaluate(self, method: MethodSpec, backend: Any, docs: list[TokenDoc], length: int, key: str) -> Cell:
        bos = backend.bos_token_id if backend.adds_bos else None
        layers = len(attention_modules(backend.model))
        finished = {i: p for i, p in self.journal.parts.get(key, {}).items() if _same_doc(p, docs, i)}
        mine = self.share.owned(len(docs))
        done = sum(str(i) in finished for i in mine)
        self.progress.start_cell(f"{method.label} @ {length}", layers * len(mine), layers * done)
        for i in mine:
            if str(i) not in finished:
                part = self.analysis.measure(
                    backend, window_ids(docs[i], length, bos), self.params, self.progress.advance
                )
                self.journal.record_part(key, str(i), {"doc_id": docs[i].doc_id, **part})
        parts = {i: self.journal.parts[key][str(i)] for i in mine}
        base = dict(
            task=self.name, method=method.label, metric=self.metric, length=length, dataset=self.dataset
        )
        context = {"params": self.params.identity()}
        return self.share.cell(base, parts, len(docs), context, combine_cell)


def _same_doc(part: dict, docs: list[TokenDoc], index: str) -> bool:
    """A journaled part counts only for the document it was measured on."""
    return index.isdigit() and int(index) < len(docs) and part.get("doc_id") == docs[int(index)].doc_id


ANALYSIS_CLASSES = {
    "frequencies": "coca_eval.analyses.frequencies:FrequencyAnalysis",
    "angles": "coca_eval.analyses.angles:AngleAnalysis",
    "decay": "coca_eval.analyses.decay:DecayAnalysis",
    "attention": "coca_eval.analyses.attention:AttentionAnalysis",
}


def make_runner(
    name: str,
    params: AnalysisParams,
    journal: Journal,
    progress: CellProgress,
    share: Share = WHOLE,
    **_: Any,
):
    """The specs' ``make_runner``: the named analysis wrapped as a cell task."""
    from coca_eval.registry import resolve

    return AnalysisTask(resolve(ANALYSIS_CLASSES[name])(), params, journal, progress, share)


def combine_cell(base: dict, parts: list[dict], context: dict) -> Cell:
    """The specs' ``combine``: the analysis named by ``base["task"]`` combines every document's part
    under the parameters recorded in ``context`` (the same call a plain run makes, without a model)."""
    from coca_eval.analyses.params import make_params
    from coca_eval.registry import resolve

    name = base["task"]
    params = make_params(name, {k: v for k, v in context["params"].items() if k != "analysis"})
    return resolve(ANALYSIS_CLASSES[name])().combine(base, parts, params)
