"""HELMET's scores of one answer, as its evaluation defines them (princeton-nlp/HELMET at 4526dfb:
``utils.py``'s metrics and parsers, ``data.py``'s per-task post-processing). Written here from those
definitions; ``tests/helmet/test_helmet_scoring.py`` holds them to values HELMET's own functions gave on a
frozen set of answers (``scripts/helmet_scorer_values.py``).

* Answers are compared after SQuAD's normalisation: lower case, punctuation dropped, the articles
  *a*, *an*, *the* dropped as words, whitespace collapsed.
* Exact match, substring exact match (the reference inside the answer) and token F1 take the best
  reference; references may be one string, a list, or a list of lists (flattened). F1 is 0 when either
  side is *yes*, *no* or *noanswer* and the two differ.
* A task scores the raw answer and the answer parsed after its prefix (``Answer:``, ``Corresponding
  value:``) and keeps the better of each metric; ICL scores the parsed label only.
* Long QA and summarisation add ROUGE-L and ROUGE-Lsum (F1 and recall, the best reference; Google's
  ``rouge-score`` with its Porter stemmer, the scorer HELMET's ``calculate_metrics`` calls) to those
  metrics; a summary is parsed after ``Summary:``. The multiple-choice set drops substring exact match
  and counts an answer holding ``letter. option`` (case ignored, the raw answer) as an exact match.
* Re-ranking parses ``[3] > [1] > ...`` into scores by rank and reads NDCG@10 with trec_eval's
  definition (``pytrec_eval``, as BEIR and HELMET do), rounded to five places as HELMET reports it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import cache

from coca_eval.references import normalize

References = str | Sequence[str] | Sequence[Sequence[str]]

_POLAR = ("yes", "no", "noanswer")  # an answer of these is right only when it is the reference


def flat_references(references: References) -> list[str]:
    if isinstance(references, str):
        return [references]
    if references and not isinstance(references[0], str):
        return [answer for group in references for answer in group]
    return list(references)


def exact_match(prediction: str, references: References) -> bool:
    return any(normalize(prediction) == normalize(r) for r in flat_references(references))


def substring_exact_match(prediction: str, references: References) -> bool:
    return any(normalize(r) in normalize(prediction) for r in flat_references(references))


def token_f1(prediction: str, reference: str) -> float:
    """Token-overlap F1 of two normalised texts (0 for a polar answer that is not the reference)."""
    ours, theirs = normalize(prediction), normalize(reference)
    if (ours in _POLAR or theirs in _POLAR) and ours != theirs:
        return 0.0
    shared = sum((Counter(ours.split()) & Counter(theirs.split())).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(ours.split()), shared / len(theirs.split())
    return 2 * precision * recall / (precision + recall)


def best_f1(prediction: str, references: References) -> float:
    return max(token_f1(prediction, r) for r in flat_references(references))


def answer_metrics(prediction: str, references: References) -> dict[str, float]:
    return {
        "exact_match": float(exact_match(prediction, references)),
        "f1": best_f1(prediction, references),
        "substring_exact_match": float(substring_exact_match(prediction, references)),
    }


def parse_after(output: str, prefix: str = "Answer:") -> str | None:
    """The line after ``prefix`` (case-insensitive; the first line when the prefix never appears), with
    the prefix stripped once more where a chat model repeated it."""
    for pattern in (rf"(?:{re.escape(prefix)})(.*)(?:\n|$)", r"(?:^)(.*)(?:\n|$)"):
        found = re.search(pattern, output, flags=re.IGNORECASE)
        if found is not None:
            line = found.group(1).strip()
            return re.sub(f"^{re.escape(prefix)}", "", line, flags=re.IGNORECASE).strip()
    return None


def _better(*scored: dict[str, float]) -> dict[str, float]:
    return {name: max(s[name] for s in scored) for name in scored[0]}


def qa_metrics(output: str, references: References, prefix: str = "Answer:") -> dict[str, float]:
    """RAG and recall tasks: each metric on the raw output and on the parsed answer, the better kept."""
    parsed = parse_after(output, prefix)
    raw = answer_metrics(output, references)
    return raw if parsed is None else _better(raw, answer_metrics(parsed, references))


@cache
def _rouge_scorer():
    try:
        from rouge_score import rouge_scorer
    except ImportError as exc:
        from coca_eval.errors import CocaEvalError

        raise CocaEvalError(
            "HELMET's long-QA and summarisation metrics need rouge-score: pip install 'coca-eval[helmet]'"
        ) from exc
    return rouge_scorer.RougeScorer(["rougeL", "rougeLsum"], use_stemmer=True)


def rouge_metrics(prediction: str, references: References) -> dict[str, float]:
    """ROUGE-L and ROUGE-Lsum of ``prediction``: the best F1 and the best recall over the references."""
    scored = [_rouge_scorer().score(target=r, prediction=prediction) for r in flat_references(references)]
    out = {}
    for kind in ("rougeL", "rougeLsum"):
        out[f"{kind}_f1"] = max(s[kind].fmeasure for s in scored)
        out[f"{kind}_recall"] = max(s[kind].recall for s in scored)
    return out


def long_metrics(output: str, references: References, prefix: str = "Answer:") -> dict[str, float]:
    """Long QA and summaries: every metric, ROUGE included, on the raw and the parsed answer, the better
    kept (HELMET's ``default_post_process``; Multi-LexSum parses after ``Summary:``)."""

    def scored(text: str) -> dict[str, float]:
        return answer_metrics(text, references) | rouge_metrics(text, references)

    parsed = parse_after(output, prefix)
    raw = scored(output)
    return raw if parsed is None else _better(raw, scored(parsed))


def choice_metrics(output: str, references: Sequence[str]) -> dict[str, float]:
    """InfiniteBench's multiple choice: the metrics without substring exact match, raw and parsed, the
    better kept; then an answer holding the reference ``letter. option`` is a match of both kinds."""
    metrics = long_metrics(output, references)
    metrics.pop("substring_exact_match")
    found = references[1].lower() in output.lower()
    metrics["substring_exact_match"] = float(found)
    if found:
        metrics["exact_match"] = 1.0
    return metrics


def icl_metrics(output: str, label: str) -> dict[str, float]:
    """ICL: the label parsed after ``label:``, scored alone."""
    return answer_metrics(parse_after(output, "label:") or "", label)


def parse_ranking(output: str) -> dict[str, int]:
    """``[3] > [1] > ID: 2`` -> ``{"3": 3, "1": 2, "2": 1}``: the longest chain of ``>``-separated numbers
    (brackets, colons and ``id`` dropped), each scored by its rank from the end, a repeat ignored. With no
    number the whole text is one unmatched id."""
    cleaned = re.sub(r"[\[\]:]", "", output).lower().replace("id", "")
    chains = [m.group(0) for m in re.finditer(r"(\d+)(?:\s*>\s*(\d+))*", cleaned)]
    longest = max(chains, key=len, default="")  # the first of the longest, as a scan keeps it
    ranked = [part.strip() for part in longest.split(">") if part.strip().isdigit()] if longest else [cleaned]
    scores: dict[str, int] = {}
    for place, passage in enumerate(ranked):
        scores.setdefault(passage, len(ranked) - place)
    return scores


def ndcg_at_10(ranking: dict[str, int], relevance: dict[str, int]) -> float:
    """trec_eval's ``ndcg_cut_10`` of one query (``pytrec_eval``), rounded to five places as HELMET does."""
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator({"q": relevance}, {"ndcg_cut.10"})
    scores = {passage: float(score) for passage, score in ranking.items()}
    return round(evaluator.evaluate({"q": scores})["q"]["ndcg_cut_10"], 5)


def ruler_recall(output: str, references: Sequence[str]) -> float:
    """HELMET's score of its RULER tasks: the fraction of references found in the raw answer, case
    ignored (no normalisation, no parsing: ``load_ruler``'s post-processing in ``data.py``)."""
    text = output.lower()
    return sum(reference.lower() in text for reference in references) / len(references)


def score_answer(task, output: str, references: Sequence[str], record: dict | None = None) -> dict:
    """One sample's record of a HELMET task: ``score`` (the task's metric, in [0, 1]) and the task's
    other metrics, as HELMET's post-processing for that task computes them."""
    if task.metric == "ruler_recall":
        found = [reference.lower() in output.lower() for reference in references]
        return {"score": ruler_recall(output, references), "found": found}
    if task.family == "json_kv":
        metrics = qa_metrics(output, list(references), prefix="corresponding value:")
        return {"score": metrics[task.metric], **metrics}
    if task.family == "rerank":
        relevance = dict(reference.rsplit(":", 1) for reference in references)
        ranking = parse_ranking(output)
        score = ndcg_at_10(ranking, {pid: int(label) for pid, label in relevance.items()})
        return {"score": score, "num_preds": len(ranking)}
    if task.family == "icl":
        metrics = icl_metrics(output, references[0])
        return {"score": metrics[task.metric], **metrics}
    if task.family == "rag":
        metrics = qa_metrics(output, list(references))
        return {"score": metrics[task.metric], **metrics}
    if task.name == "infbench_choice":
        metrics = choice_metrics(output, list(references))
        return {"score": metrics[task.metric], **metrics}
    if task.family in ("narrativeqa", "infbench", "multi_lexsum"):
        prefix = "Summary:" if task.name == "multi_lexsum" else "Answer:"
        metrics = long_metrics(output, list(references), prefix)
        return {"score": metrics[task.metric], **metrics}
    raise ValueError(f"no scorer for HELMET family {task.family!r}")
