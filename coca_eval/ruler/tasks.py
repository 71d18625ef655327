"""RULER's thirteen tasks, each with the parameters RULER's own configuration gives it.

The numbers and wordings are RULER's (its ``synthetic.yaml``, the task constants of its data and
evaluation scripts); only the code is ours. A task is data: the family modules (``niah``,
``variable_tracking``, ``common_words``, ``frequent_words``, ``qa``) turn one into prompts, and
:mod:`coca_eval.ruler.scoring` scores it.

Templates keep RULER's placeholders: ``{context}`` where the haystack goes, ``{query}`` for what is
asked, and per family ``{type_needle_v}`` (NIAH) or ``{num_v}`` (variable tracking). Single-answer NIAH
tasks read in the singular ("A special magic number is hidden ..."), as RULER rewrites them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from coca_eval.generation.params import expand_names
from coca_eval.registry import Registry

NIAH_TEMPLATE = (
    "Some special magic {type_needle_v} are hidden within the following text. Make sure to memorize it. "
    "I will quiz you about the {type_needle_v} afterwards.\n{context}\n"
    "What are all the special magic {type_needle_v} for {query} mentioned in the provided text?"
)
NIAH_ANSWER_PREFIX = " The special magic {type_needle_v} for {query} mentioned in the provided text are"
NIAH_NEEDLE = "One of the special magic {type_needle_v} for {key} is: {value}."

VT_TEMPLATE = (
    "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n{context}\n"
    "Question: Find all variables that are assigned the value {query} in the text above."
)
VT_ANSWER_PREFIX = (
    " Answer: According to the chain(s) of variable assignment in the text above, {num_v} variables are "
    "assigned the value {query}, they are: "
)

CWE_TEMPLATE = (
    "Below is a numbered list of words. In these words, some appear more often than others. Memorize the "
    "ones that appear most often.\n{context}\nQuestion: What are the 10 most common words in the above list?"
)
CWE_ANSWER_PREFIX = " Answer: The top 10 words that appear most often in the list are:"

FWE_TEMPLATE = (
    "Read the following coded text and track the frequency of each coded word. Find the three most "
    "frequently appeared coded words. {context}\nQuestion: Do not provide any explanation. Please ignore "
    "the dots '....'. What are the three most frequently appeared words in the above coded text?"
)
FWE_ANSWER_PREFIX = (
    " Answer: According to the coded text above, the three most frequently appeared words are:"
)

QA_INSTRUCTION = (
    "Answer the question based on the given documents. Only give me the answer and do not output any "
    "other words."
)
QA_TEMPLATE = (
    f"{QA_INSTRUCTION}\n\nThe following are given documents.\n\n{{context}}\n\n{QA_INSTRUCTION}\n\n"
    "Question: {query}"
)
QA_ANSWER_PREFIX = " Answer:"
QA_DOCUMENT = "Document {i}:\n{document}"

NOISE_TEXT = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."

# Each family's draw (imported on first use: QA loads `datasets`, the others need nothing heavy)
FAMILY_DRAWS = {
    "niah": "coca_eval.ruler.niah:draw_niah",
    "vt": "coca_eval.ruler.variable_tracking:draw_vt",
    "cwe": "coca_eval.ruler.common_words:draw_cwe",
    "fwe": "coca_eval.ruler.frequent_words:draw_fwe",
    "qa": "coca_eval.ruler.qa:draw_qa",
}

STRING_MATCH_ALL = "string_match_all"
STRING_MATCH_PART = "string_match_part"


@dataclass(frozen=True)
class RulerTask:
    """One RULER task. Fields a family does not use keep their defaults.

    ``haystack`` is RULER's ``type_haystack``: ``noise`` (the five sentences repeated), ``essay`` (prose;
    RULER's Paul Graham essays, our embedded books by default) or ``needle`` (distractor needles);
    ``""`` for families that bring their own context (cwe, fwe, qa).
    """

    name: str
    family: str  # "niah" | "vt" | "cwe" | "fwe" | "qa"
    metric: str  # "string_match_all" | "string_match_part"
    answer_budget: int  # RULER's tokens_to_generate
    answer_prefix: str
    template: str
    haystack: str = ""
    # NIAH: key and value kinds (words | numbers | uuids) and RULER's num_needle_k / _v / _q
    key_type: str = ""
    value_type: str = ""
    keys: int = 1
    values: int = 1
    queries: int = 1
    # variable tracking
    chains: int = 0
    hops: int = 0
    # common words: how often each common / uncommon word appears, how many are common
    common_repeats: int = 0
    uncommon_repeats: int = 0
    common_words: int = 0
    # frequent words: Zipf exponent, coded word length
    alpha: float = 0.0
    coded_word_length: int = 0
    # qa: "squad" | "hotpotqa"
    dataset: str = ""

    @property
    def draw(self) -> str:
        """The family's draw, as the prompt builder resolves it."""
        return FAMILY_DRAWS[self.family]

    @property
    def needles(self) -> int:
        """NIAH needles planted: every key (RULER raises keys to at least the queries) times its values."""
        return max(self.keys, self.queries) * self.values

    @property
    def singular(self) -> bool:
        """RULER words the prompt in the singular when exactly one value is asked for."""
        return self.family == "niah" and self.queries * self.values == 1

    def wording(self, text: str) -> str:
        """RULER's singular rewrite of a NIAH template or answer prefix (``Some`` -> ``A``, ...)."""
        if not self.singular:
            return text
        for old, new in (("Some", "A"), ("are all", "is"), ("are", "is"), ("answers", "answer")):
            text = text.replace(old, new)
        return text

    @property
    def value_noun(self) -> str:
        """What the prompt calls the values: ``numbers``, or ``number`` in the singular."""
        return self.value_type[:-1] if self.singular else self.value_type


RULER_TASKS = Registry[RulerTask]("RULER task")


def _niah(name: str, haystack: str, key: str, value: str, keys=1, values=1, queries=1) -> RulerTask:
    return RulerTask(
        name=name,
        family="niah",
        metric=STRING_MATCH_ALL,
        answer_budget=128,
        answer_prefix=NIAH_ANSWER_PREFIX,
        template=NIAH_TEMPLATE,
        haystack=haystack,
        key_type=key,
        value_type=value,
        keys=keys,
        values=values,
        queries=queries,
    )


for _task in (
    _niah("niah_single_1", "noise", "words", "numbers"),
    _niah("niah_single_2", "essay", "words", "numbers"),
    _niah("niah_single_3", "essay", "words", "uuids"),
    _niah("niah_multikey_1", "essay", "words", "numbers", keys=4),
    _niah("niah_multikey_2", "needle", "words", "numbers"),
    _niah("niah_multikey_3", "needle", "uuids", "uuids"),
    _niah("niah_multivalue", "essay", "words", "numbers", values=4),
    _niah("niah_multiquery", "essay", "words", "numbers", keys=4, queries=4),
    RulerTask(
        "vt", "vt", STRING_MATCH_ALL, 30, VT_ANSWER_PREFIX, VT_TEMPLATE, haystack="noise", chains=1, hops=4
    ),
    RulerTask(
        "cwe",
        "cwe",
        STRING_MATCH_ALL,
        120,
        CWE_ANSWER_PREFIX,
        CWE_TEMPLATE,
        common_repeats=30,
        uncommon_repeats=3,
        common_words=10,
    ),
    RulerTask(
        "fwe", "fwe", STRING_MATCH_ALL, 50, FWE_ANSWER_PREFIX, FWE_TEMPLATE, alpha=2.0, coded_word_length=6
    ),
    RulerTask("qa_1", "qa", STRING_MATCH_PART, 32, QA_ANSWER_PREFIX, QA_TEMPLATE, dataset="squad"),
    RulerTask("qa_2", "qa", STRING_MATCH_PART, 32, QA_ANSWER_PREFIX, QA_TEMPLATE, dataset="hotpotqa"),
):
    RULER_TASKS.add(_task.name, _task)

RULER_GROUPS: dict[str, tuple[str, ...]] = {"ruler": tuple(RULER_TASKS.names())}


def expand_task_names(names: Iterable[str]) -> tuple[str, ...]:
    """Task names with groups (``ruler``) expanded, in the order given, each once; an unknown name is a
    user error."""
    return expand_names(names, RULER_GROUPS, RULER_TASKS, "RULER")


def definitions() -> Registry[RulerTask]:
    """The spec's ``definitions`` hook: RULER's tasks, for what reuses them through the registry."""
    return RULER_TASKS


def shortest_length(params) -> tuple[int, str]:
    """The shortest N the run's tasks can build: each task's template and answer prefix, a haystack
    token, and the answer budget where N counts it (``params.prompt_length``)."""
    from coca_eval.lengths import shortest_answered, words_of

    def fixed(name: str) -> tuple[int, str]:
        task = RULER_TASKS.get(name)
        return words_of(task.template, task.answer_prefix), "template and answer prefix"

    return shortest_answered(params, fixed)


def catalogue() -> tuple[list[str], list[list[str]]]:
    """Every task with its family, metric, answer budget and haystack or data (``coca-eval tasks``)."""
    columns = ["task", "family", "metric", "answer budget", "haystack / data"]
    data = {"squad": "SQuAD v2 dev (hub or --qa-data)", "hotpotqa": "HotpotQA dev (hub or --qa-data)"}
    rows = [
        [t.name, t.family, t.metric, str(t.answer_budget), t.haystack or data.get(t.dataset, "generated")]
        for t in (RULER_TASKS.get(name) for name in RULER_TASKS.names())
    ]
    return columns, rows
