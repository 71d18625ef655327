"""LongBench v1's averages over tasks: its six categories per language, and LongBench-E's length buckets.

Categories (THUDM/LongBench at 2e00731, ``LongBench/README.md`` and ``task.md``): the leaderboard gives,
per language, the mean of the category's task scores, and "Avg" the mean of the six category means.
Code completion has no language, so both tables share it; Chinese has one task in each other category.
The averages are taken over the task scores as ``eval.py`` rounds them; the README prints one place
(:func:`category_table` rounds likewise when asked). ``tests/longbench`` checks that this rule gives the
published category tables from the published task tables, model by model.

Length buckets (``eval.py``'s ``scorer_e``): a sample falls in 0-4k, 4-8k or 8k+ by its ``length``
field (words for English and code, characters for Chinese, as the data counts them, not the model's
tokens), and each bucket's score is 100 times the mean of its samples, two places. ``eval.py`` stops at
tasks; :func:`bucket_averages`, the mean of the tasks' buckets, is this project's summary over tasks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from coca_eval.longbench.scoring import row_score

CATEGORIES: Mapping[str, tuple[str, ...]] = {
    "Single-Doc QA": ("narrativeqa", "qasper", "multifieldqa_en", "multifieldqa_zh"),
    "Multi-Doc QA": ("hotpotqa", "2wikimqa", "musique", "dureader"),
    "Summarization": ("gov_report", "qmsum", "multi_news", "vcsum"),
    "Few-shot Learning": ("trec", "triviaqa", "samsum", "lsht"),
    "Synthetic Tasks": ("passage_count", "passage_retrieval_en", "passage_retrieval_zh"),
    "Code Completion": ("lcc", "repobench-p"),
}
CHINESE_TASKS = frozenset({"multifieldqa_zh", "dureader", "vcsum", "lsht", "passage_retrieval_zh"})
CODE_TASKS = frozenset(CATEGORIES["Code Completion"])
TASKS = tuple(task for tasks in CATEGORIES.values() for task in tasks)
LONGBENCH_E_TASKS = (  # the tasks LongBench-E resamples evenly over its length buckets
    "qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "gov_report", "multi_news", "trec",
    "triviaqa", "samsum", "passage_count", "passage_retrieval_en", "lcc", "repobench-p",
)  # fmt: skip
BUCKETS = ("0-4k", "4-8k", "8k+")


def language_tasks(language: str) -> frozenset[str]:
    """The tasks of the ``en`` or ``zh`` leaderboard (code completion in both)."""
    if language not in ("en", "zh"):
        raise ValueError(f"LongBench's leaderboards are 'en' and 'zh', not {language!r}")
    chinese = language == "zh"
    return frozenset(t for t in TASKS if t in CODE_TASKS or (t in CHINESE_TASKS) == chinese)


def category_averages(task_scores: Mapping[str, float], language: str) -> dict[str, float]:
    """Each category's mean over the language's tasks that were scored, and ``Avg`` over the categories
    that have one; a category with no scored task is left out (and so out of ``Avg``)."""
    wanted = language_tasks(language)
    averages = {}
    for category, tasks in CATEGORIES.items():
        scores = [task_scores[t] for t in tasks if t in wanted and t in task_scores]
        if scores:
            averages[category] = sum(scores) / len(scores)
    if averages:
        averages["Avg"] = sum(averages.values()) / len(averages)
    return averages


def category_table(task_scores: Mapping[str, float], language: str, places: int = 1) -> dict[str, float]:
    """:func:`category_averages` rounded as the README prints them."""
    return {name: round(value, places) for name, value in category_averages(task_scores, language).items()}


def length_bucket(length: int) -> str:
    """LongBench-E's bucket of a sample by its ``length`` field."""
    return "0-4k" if length < 4000 else "4-8k" if length < 8000 else "8k+"


def _bucket_mean(scores: Sequence[float]) -> float:
    """100 times the mean, two places, as numpy computes and rounds it in ``scorer_e`` (its pairwise sum
    and its own rounding of a numpy float, so the last digit agrees); NaN for an empty bucket, which is
    what ``scorer_e`` prints for one."""
    import numpy as np

    return float(round(100 * np.mean(scores), 2)) if scores else math.nan


def task_bucket_scores(task: str, rows: Sequence[Mapping]) -> dict[str, float]:
    """A task's score in each length bucket (``eval.py --e``)."""
    scores: dict[str, list[float]] = {bucket: [] for bucket in BUCKETS}
    for row in rows:
        scores[length_bucket(row["length"])].append(row_score(task, row))
    return {bucket: _bucket_mean(values) for bucket, values in scores.items()}


def bucket_scores(samples: Sequence[Mapping]) -> dict[str, float]:
    """A cell's scores in each length bucket from its sample records (``longbench_length``, ``score``
    in [0, 1], LongBench's metric of the sample)."""
    scores: dict[str, list[float]] = {bucket: [] for bucket in BUCKETS}
    for sample in samples:
        scores[length_bucket(sample["longbench_length"])].append(float(sample["score"]))
    return {bucket: _bucket_mean(values) for bucket, values in scores.items()}


def bucket_averages(bucket_scores: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Each bucket's mean over the tasks that have samples in it (a summary of this project's; LongBench
    plots per-category curves but its code stops at tasks)."""
    averages = {}
    for bucket in BUCKETS:
        values = [s[bucket] for s in bucket_scores.values() if not math.isnan(s[bucket])]
        averages[bucket] = sum(values) / len(values) if values else math.nan
    return averages
