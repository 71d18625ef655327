"""HELMET's model-development tasks, each with the numbers HELMET's configurations give it.

The names, categories, metrics, answer budgets, stop rules, sample counts and units per length are
HELMET's (princeton-nlp/HELMET at 4526dfb: the short configs ``configs/recall_short.yaml``,
``rag_short.yaml``, ``rerank_short.yaml``, ``icl_short.yaml`` for 8k-64k, and its main configs
``recall.yaml``, ``rag.yaml``, ``rerank.yaml``, ``icl.yaml`` for 128k; the metric per task from
``scripts/collect_results.py``); only the code is ours. A task is data: :mod:`coca_eval.helmet.prompts`
turns one into prompts and :mod:`coca_eval.helmet.scoring` scores it.

``units`` is what HELMET puts in a prompt at each of its lengths: key-value pairs (``json_kv``),
passages (RAG, re-rank) or demonstrations (ICL). Under ``--protocol exact`` the units are instead
added while they fit in N; the RULER recall tasks have no units (their haystack fills N either way).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from coca_eval.generation.params import expand_names
from coca_eval.registry import Registry

HELMET_LENGTHS = (8192, 16384, 32768, 65536)  # the short configs' input_max_length (the default lengths)
HELMET_LONG = 131072  # the main configs' input_max_length, HELMET's headline setting

RECALL, RAG, RERANK, ICL, LONGQA, SUMM = "Recall", "RAG", "Re-rank", "ICL", "LongQA", "Summ"
CATEGORIES = (RECALL, RAG, RERANK, ICL, LONGQA, SUMM)  # HELMET's names (``custom_avgs``, collect_results.py)

SUBSTRING_EM, RULER_RECALL, NDCG10, EXACT_MATCH, ROUGE_L, ROUGE_LSUM = (
    "substring_exact_match",
    "ruler_recall",
    "NDCG@10",
    "exact_match",
    "rougeL_f1",
    "rougeLsum_f1",
)

SYNTHETIC = "synthetic (generated here, offline)"


@dataclass(frozen=True)
class HelmetTask:
    """One HELMET task.

    ``family`` says how its prompts are made (``json_kv``, ``ruler``, ``rag``, ``rerank``, ``icl``);
    ``ruler_task`` names the RULER task a recall task draws its needles from; ``source`` where its
    data comes from (shown by ``coca-eval tasks`` and in a missing-data message)."""

    name: str
    category: str
    family: str
    metric: str
    answer_budget: int  # HELMET's generation_max_length
    samples: int  # HELMET's max_test_samples
    source: str
    units: dict[int, int] = field(default_factory=dict)  # HELMET's k (or shots) per input_max_length
    shots: int = 0  # demonstrations before the question (RAG, re-rank, json_kv)
    stop_newline: bool = False  # HELMET's config sets stop_new_line (its code ignores it: see helmet/task.py)
    ruler_task: str = ""
    judged: str = ""  # HELMET's judged metric (``gpt-4-score``, ``gpt-4-f1``), which needs ``--judge``

    def helmet_units(self, length: int) -> int | None:
        """HELMET's unit count at ``length`` (None where its configs have none)."""
        return self.units.get(length)


HELMET_TASKS = Registry[HelmetTask]("HELMET task")


def _per_length(*counts: int) -> dict[int, int]:
    """HELMET's unit counts at 8k, 16k, 32k, 64k (its short configs) and 128k (its main configs)."""
    return dict(zip((*HELMET_LENGTHS, HELMET_LONG), counts, strict=True))


def _ruler(name: str, ruler_task: str, budget: int) -> HelmetTask:
    return HelmetTask(name, RECALL, "ruler", RULER_RECALL, budget, 100, SYNTHETIC, ruler_task=ruler_task)


RAG_SOURCES = {
    "kilt_nq": "Natural Questions",
    "kilt_triviaqa": "TriviaQA",
    "kilt_hotpotqa": "HotpotQA",
    "kilt_popqa_3": "PopQA (subject popularity < 10^3)",
}


def _rag(name: str, what: str) -> HelmetTask:
    source = f"{what} with HELMET's retrieved passages (hub archive or --data)"
    units = _per_length(50, 105, 220, 440, 1000)
    return HelmetTask(name, RAG, "rag", SUBSTRING_EM, 20, 100, source, units, shots=2, stop_newline=True)


ICL_SHOTS = {  # HELMET's shots at 8k, 16k, 32k, 64k (its icl_short.yaml) and 128k (icl.yaml)
    "icl_trec_coarse": ("TREC coarse (CogComp/trec)", (400, 800, 1600, 3300, 6600)),
    "icl_trec_fine": ("TREC fine (CogComp/trec)", (400, 800, 1600, 3200, 6400)),
    "icl_banking77": ("BANKING77 (PolyAI/banking77)", (360, 720, 1450, 2900, 5900)),
    "icl_clinic150": ("CLINC150 (clinc_oos, plus)", (440, 880, 1750, 3525, 7050)),
    "icl_nlu": ("NLU (xingkunliuxtracta/nlu_evaluation_data)", (510, 1020, 2040, 4080, 8296)),
}


def _icl(name: str, what: str, shots: tuple[int, ...]) -> HelmetTask:
    source = f"{what} from the hub, or --data"
    return HelmetTask(name, ICL, "icl", EXACT_MATCH, 20, 500, source, _per_length(*shots), stop_newline=True)


for _task in (
    HelmetTask(
        "json_kv",
        RECALL,
        "json_kv",
        SUBSTRING_EM,
        100,
        100,
        SYNTHETIC,
        _per_length(105, 220, 440, 900, 1800),
        2,
    ),
    _ruler("ruler_niah_mk_2", "niah_multikey_2", 50),
    _ruler("ruler_niah_mk_3", "niah_multikey_3", 100),
    _ruler("ruler_niah_mv", "niah_multivalue", 50),
    *(_rag(name, source) for name, source in RAG_SOURCES.items()),
    HelmetTask(
        "msmarco_rerank_psg",
        RERANK,
        "rerank",
        NDCG10,
        200,
        100,
        "MS MARCO passages with HELMET's relevance labels (hub archive or --data)",
        _per_length(50, 130, 285, 600, 1000),
        shots=2,
        stop_newline=True,
    ),
    *(_icl(name, what, shots) for name, (what, shots) in ICL_SHOTS.items()),
):
    HELMET_TASKS.add(_task.name, _task)

LONG_SOURCE = "{what} (--data: {files})"


def _long(name: str, category: str, metric: str, budget: int, what: str, files: str, judged: str = ""):
    """A long-QA or summarisation task (HELMET's ``longqa.yaml``, ``summ.yaml`` and their short configs:
    two demonstrations, 100 samples, no newline stop)."""
    family = "infbench" if name.startswith("infbench") else name
    source = LONG_SOURCE.format(what=what, files=files)
    return HelmetTask(name, category, family, metric, budget, 100, source, shots=2, judged=judged)


LONG_TASKS = (
    _long("narrativeqa", LONGQA, ROUGE_L, 100, "NarrativeQA", "narrativeqa/*.jsonl", "gpt-4-score"),
    _long("infbench_qa", LONGQA, ROUGE_L, 10, "InfiniteBench En.QA", "infbench/longbook_qa_eng.jsonl"),
    _long(
        "infbench_choice",
        LONGQA,
        EXACT_MATCH,
        10,
        "InfiniteBench En.MC",
        "infbench/longbook_choice_eng.jsonl",
    ),
    _long(
        "infbench_sum",
        SUMM,
        ROUGE_LSUM,
        1200,
        "InfiniteBench En.Sum",
        "infbench/longbook_sum_eng.jsonl",
        "gpt-4-f1",
    ),
    _long("multi_lexsum", SUMM, ROUGE_LSUM, 400, "Multi-LexSum", "multi_lexsum/*.jsonl", "gpt-4-f1"),
)
for _task in LONG_TASKS:
    HELMET_TASKS.add(_task.name, _task)

HELMET_GROUPS: dict[str, tuple[str, ...]] = {}


def refresh_groups() -> None:
    """``helmet`` (every task) and one group per category (``recall``, ``rag``, ``re-rank``, ``icl``,
    ``longqa``, ``summ``)."""
    HELMET_GROUPS.clear()
    HELMET_GROUPS["helmet"] = tuple(HELMET_TASKS.names())
    for category in CATEGORIES:
        members = tuple(t for t in HELMET_TASKS.names() if HELMET_TASKS.get(t).category == category)
        if members:
            HELMET_GROUPS[category.lower()] = members


refresh_groups()


def expand_task_names(names: Iterable[str]) -> tuple[str, ...]:
    """Task names with groups (``helmet``, a category in any case) expanded, in the order given, each
    once; an unknown name is a user error."""
    return expand_names(names, HELMET_GROUPS, HELMET_TASKS, "HELMET", fold_case=True)


def category_of(task: str) -> str:
    return HELMET_TASKS.get(task).category if task in HELMET_TASKS else "other"


def catalogue() -> tuple[list[str], list[list[str]]]:
    """Every task with its category, metric, answer budget and data source (``coca-eval tasks``)."""
    columns = ["task", "category", "metric", "answer budget", "data"]
    rows = [
        [t.name, t.category, t.metric, str(t.answer_budget), t.source]
        for t in (HELMET_TASKS.get(name) for name in HELMET_TASKS.names())
    ]
    return columns, rows
