"""LongBench v1's score of one answer and of one task, as its evaluation defines them (THUDM/LongBench at
2e00731, ``LongBench/metrics.py`` and ``LongBench/eval.py``). Written here from those definitions, with
the libraries LongBench scores with (``rouge`` 1.0.1, ``jieba`` 0.42.1, ``fuzzywuzzy`` 0.18.0, the
``longbench`` extra), so a number printed here is one LongBench's own scripts would print for the same
answers; ``tests/longbench/test_longbench_scoring.py`` holds them to the values LongBench's functions gave
on a frozen set of answers (``scripts/longbench_scorer_values.py``).

* English QA: token F1 after SQuAD's normalisation; Chinese QA: token F1 over jieba's words, each
  stripped of punctuation (ASCII and Chinese) and whitespace, empty words dropped.
* Summaries: ROUGE-L F (``rouge``'s summary-level LCS over sentences split at ``.``); Chinese over jieba's
  words joined by spaces. A text ``rouge`` cannot score (empty, only stops, a sentence pair of about a
  thousand words, which exhausts its recursion) scores 0, as in LongBench.
* Classification, retrieval and counting: the share of the classes or numbers named that are right.
* Code: the first line that is not a fence or comment, fuzzywuzzy's ratio to the reference, over 100.
* The few-shot tasks (trec, triviaqa, samsum, lsht) score only the answer's first line; every task keeps
  the best reference; a task's score is the mean of its samples, times 100, rounded to two places.

The libraries are imported where first used, so importing :mod:`coca_eval` never needs them.
"""

from __future__ import annotations

import _thread
import re
import string
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache

from coca_eval.references import normalize

# The Chinese punctuation LongBench strips from Chinese words, besides ASCII's (``normalize_zh_answer``).
_ZH_PUNCTUATION = (
    "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟"
    "〰〾〿–—‘’‛“”„‟…‧﹏."
)
_ALL_PUNCTUATION = frozenset(string.punctuation + _ZH_PUNCTUATION)

FIRST_LINE_TASKS = frozenset({"trec", "triviaqa", "samsum", "lsht"})  # few-shot: the model runs on
# into the next example, so LongBench scores the first line only


@cache
def _jieba():
    """jieba, quiet: it logs its dictionary loading, which says nothing about a score."""
    import jieba

    jieba.setLogLevel(60)
    return jieba


def chinese_words(text: str) -> list[str]:
    """jieba's precise-mode words (LongBench's Chinese tokenisation for F1 and ROUGE-L)."""
    return list(_jieba().cut(text, cut_all=False))


def normalize_zh(text: str) -> str:
    """A Chinese word as LongBench compares it: lower case, no punctuation, no whitespace at all."""
    kept = "".join(ch for ch in text.lower() if ch not in _ALL_PUNCTUATION)
    return "".join(kept.split())


def token_f1(prediction: Sequence[str], reference: Sequence[str]) -> float:
    """F1 of the two token multisets (0 when they share none, so either side empty scores 0)."""
    shared = sum((Counter(prediction) & Counter(reference)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(prediction), shared / len(reference)
    return (2 * precision * recall) / (precision + recall)


def qa_f1(prediction: str, reference: str, **_) -> float:
    return token_f1(normalize(prediction).split(), normalize(reference).split())


def qa_f1_zh(prediction: str, reference: str, **_) -> float:
    def words(text: str) -> list[str]:
        return [w for w in map(normalize_zh, chinese_words(text)) if w]

    return token_f1(words(prediction), words(reference))


def _at_depth(depth: int, function: Callable, *args):
    """``function(*args)`` run with ``depth`` Python frames on its thread's stack, its own included.

    ``rouge`` rebuilds the LCS by recursion, one frame per word of a sentence pair, so a pair of about a
    thousand words runs into Python's recursion limit and LongBench scores it 0 (its ``except``). Where
    that happens depends on how many frames stand below the call: ``eval.py`` run as a script calls
    ``get_scores`` four frames deep (its module, ``scorer``, ``rouge_score``, ``get_scores``; five for
    Chinese). Calling from a fresh thread at that depth puts the cut where LongBench's falls, whatever
    the caller's stack (a test runner's, a worker's)."""
    outcome: dict = {}
    finished = _thread.allocate_lock()
    finished.acquire()

    def climb(level: int):
        return climb(level + 1) if level < depth - 1 else function(*args)

    def start() -> None:
        try:
            outcome["value"] = climb(2)  # this frame is the first
        except BaseException as error:  # noqa: BLE001 - handed back to the caller below
            outcome["error"] = error
        finally:
            finished.release()

    _thread.start_new_thread(start, ())
    finished.acquire()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _rouge_l_at(depth: int, prediction: str, reference: str) -> float:
    """ROUGE-L F of the ``rouge`` package, called ``depth`` frames deep; 0 where it refuses the pair (an
    empty hypothesis, a text of stops only, a sentence pair past the recursion limit), which LongBench
    counts as a miss rather than an error."""
    from rouge import Rouge

    try:
        scores = _at_depth(depth, Rouge().get_scores, [prediction], [reference], True)
    except Exception:  # noqa: BLE001 - any refusal of rouge's is LongBench's 0
        return 0.0
    return scores["rouge-l"]["f"]


def rouge_l(prediction: str, reference: str, **_) -> float:
    return _rouge_l_at(4, prediction, reference)


def rouge_l_zh(prediction: str, reference: str, **_) -> float:
    return _rouge_l_at(5, " ".join(chinese_words(prediction)), " ".join(chinese_words(reference)))


def classification(prediction: str, reference: str, all_classes: Sequence[str] = (), **_) -> float:
    """1 over the number of classes named when the reference is among them, else 0. A class that sits
    inside the reference (``财经`` in ``国内财经``) is not held against the answer, but LongBench drops
    such classes from the list it is walking, so the class after each dropped one escapes the check;
    that walk is kept, as it changes the score of answers naming several classes."""
    named = [name for name in all_classes if name in prediction]
    i = 0
    while i < len(named):
        if named[i] in reference and named[i] != reference:
            named.remove(named[i])
        i += 1
    return 1.0 / len(named) if reference in named else 0.0


def _share_of_numbers(prediction: str, target: str) -> float:
    """The share of the numbers in the answer that are ``target`` (0 for an answer with none)."""
    numbers = re.findall(r"\d+", prediction)
    return 0.0 if not numbers else float(numbers.count(target) / len(numbers))


def _paragraph_number(reference: str, pattern: str) -> str:
    found = re.findall(pattern, reference)
    if not found:
        raise ValueError(f"reference {reference!r} names no paragraph ({pattern!r})")
    return found[0]


def retrieval(prediction: str, reference: str, **_) -> float:
    return _share_of_numbers(prediction, _paragraph_number(reference, r"Paragraph (\d+)"))


def retrieval_zh(prediction: str, reference: str, **_) -> float:
    return _share_of_numbers(prediction, _paragraph_number(reference, r"段落(\d+)"))


def count(prediction: str, reference: str | int, **_) -> float:
    return _share_of_numbers(prediction, str(reference))


@cache
def _fuzz():
    """fuzzywuzzy's ``fuzz``, without its note that python-Levenshtein is absent: LongBench's
    requirements leave it out, so its numbers are difflib's, and so are these."""
    import difflib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fuzzywuzzy import fuzz
    if fuzz.SequenceMatcher is not difflib.SequenceMatcher:
        warnings.warn(
            "fuzzywuzzy found python-Levenshtein and scores code with it: LongBench's requirements do not "
            "install it, and its ratios differ from difflib's, so code scores may not match LongBench's",
            stacklevel=3,
        )
    return fuzz


def code_line(prediction: str) -> str:
    """The first line of the answer (leading newlines skipped) with no backtick, ``#`` or ``//``: the
    line of code, past a fence or a comment; empty when there is none."""
    lines = prediction.lstrip("\n").split("\n")
    return next((line for line in lines if "`" not in line and "#" not in line and "//" not in line), "")


def code_similarity(prediction: str, reference: str, **_) -> float:
    return _fuzz().ratio(code_line(prediction), reference) / 100


METRIC_OF_TASK: Mapping[str, Callable[..., float]] = {
    "narrativeqa": qa_f1,
    "qasper": qa_f1,
    "multifieldqa_en": qa_f1,
    "multifieldqa_zh": qa_f1_zh,
    "hotpotqa": qa_f1,
    "2wikimqa": qa_f1,
    "musique": qa_f1,
    "dureader": rouge_l_zh,
    "gov_report": rouge_l,
    "qmsum": rouge_l,
    "multi_news": rouge_l,
    "vcsum": rouge_l_zh,
    "trec": classification,
    "triviaqa": qa_f1,
    "samsum": rouge_l,
    "lsht": classification,
    "passage_retrieval_en": retrieval,
    "passage_count": count,
    "passage_retrieval_zh": retrieval_zh,
    "lcc": code_similarity,
    "repobench-p": code_similarity,
}


def scored_text(task: str, prediction: str) -> str:
    """What of the answer LongBench scores: the first line for the few-shot tasks, all of it else."""
    return prediction.lstrip("\n").split("\n")[0] if task in FIRST_LINE_TASKS else prediction


def sample_score(
    task: str, prediction: str, answers: Iterable[str], all_classes: Sequence[str] | None = None
) -> float:
    """One sample's score in [0, 1]: the task's metric against its best reference (0 with none)."""
    metric, text = METRIC_OF_TASK[task], scored_text(task, prediction)
    score = 0.0
    for reference in answers:
        score = max(score, metric(text, reference, all_classes=all_classes or ()))
    return score


def row_score(task: str, row: Mapping) -> float:
    """The score of one row of a prediction file in LongBench's layout (``pred``, ``answers``,
    ``all_classes``)."""
    return sample_score(task, row["pred"], row["answers"], row.get("all_classes"))


def task_score(task: str, rows: Sequence[Mapping]) -> float:
    """A task's score as ``eval.py`` prints it: 100 times the mean sample score, two places (summed in
    order, as LongBench sums, so the last digit agrees). Each row is scored with its own classes, where
    ``eval.py`` uses the last row's for all; LongBench's files give a task's rows one list, so the two
    agree on them."""
    total = 0.0
    for row in rows:
        total += row_score(task, row)
    return round(100 * total / len(rows), 2)
