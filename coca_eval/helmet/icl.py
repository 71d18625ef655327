"""HELMET's in-context learning tasks: many labelled examples, then a text to label, labels mapped to
integers drawn per question so the model must learn the mapping from the context.

Everything is HELMET's (``load_icl`` in its ``data.py`` at 4526dfb):

* data: the public sets by their hub ids (TREC coarse and fine, BANKING77, CLINC150 ``plus``, NLU), the
  test split (CLINC150: validation; NLU has one split, cut 90/10 by ``train_test_split`` with the seed);
* the questions: when the test split holds more than ``--samples``, it is shuffled with the seed and
  cut to ``--samples`` by label-balanced rounds (``balance_labels``);
* a question's demonstrations: label-balanced rounds from the training split, seeded by the sha256 of
  the question's text plus the seed; the label ids are mapped through a permutation of ``range(labels)``
  shuffled by the same seed (Python's generator), so ``label: 17`` means something else per question;
* items read ``{text}\\nlabel: {label}``, blank-line separated; the answer is parsed after ``label:``.

Exact protocol: the demonstrations of HELMET's rounds are added while they fit (the last one cut to the
token); ``--protocol helmet`` uses HELMET's shot count for N and its truncation.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.segments import TooShort, take
from coca_eval.helmet.data import ChosenRows

TEMPLATE = (
    'Use the provided mapping from the text to label to assign a label to the text. Only output "label: '
    '{label}" and nothing else. \n\n{context}\n\n{question}'
)
ANSWER_PREFIX = "label:"
ITEM = "{text}\nlabel: {label}"


@dataclass(frozen=True)
class IclSource:
    """A hub dataset as HELMET reads it: its id (and configuration), splits, text and label fields and
    label count."""

    hub_id: str
    config: str | None
    train: str
    test: str | None  # None: one split, cut 90/10 with the seed (NLU)
    label_field: str
    labels: int
    text_field: str = "text"


SOURCES = {
    "icl_trec_coarse": IclSource("CogComp/trec", None, "train", "test", "coarse_label", 6),
    "icl_trec_fine": IclSource("CogComp/trec", None, "train", "test", "fine_label", 50),
    "icl_banking77": IclSource("PolyAI/banking77", None, "train", "test", "label", 77),
    "icl_clinic150": IclSource("clinc_oos", "plus", "train", "validation", "intent", 151),
    "icl_nlu": IclSource("xingkunliuxtracta/nlu_evaluation_data", None, "train", None, "label", 68),
}


@dataclass(frozen=True)
class Example:
    text: str
    label: int


def balanced_rounds(data: list[Example], shots: int, seed: int) -> list[Example]:
    """HELMET's ``balance_labels``: rounds holding one example of every label (in order of first
    appearance), each round's order shuffled, cut to ``shots``."""
    rand = random.Random(seed)
    by_label: dict[int, list[Example]] = {}
    for example in data:
        by_label.setdefault(example.label, []).append(example)
    rounds_needed = math.ceil(shots / len(by_label))
    rounds: list[list[Example]] = [[] for _ in range(rounds_needed)]
    for examples in by_label.values():
        picked = rand.sample(range(len(examples)), rounds_needed % len(examples))
        while len(picked) < rounds_needed:
            picked += rand.sample(range(len(examples)), min(rounds_needed - len(picked), len(examples)))
        for place, index in enumerate(picked):
            rounds[place].append(examples[index])
    for members in rounds:
        rand.shuffle(members)
    return [example for members in rounds for example in members][:shots]


def question_seed(text: str, seed: int) -> int:
    return (int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) + seed) % 2**31


def label_mapping(labels: int, local_seed: int) -> list[int]:
    """The permutation a question's labels are shown through (HELMET's ``random.shuffle`` after
    ``random.seed``)."""
    mapping = list(range(labels))
    random.Random(local_seed).shuffle(mapping)
    return mapping


@dataclass(frozen=True)
class IclSet(ChosenRows):
    """One task's chosen questions (``rows``: :class:`Example`) and its training split."""

    train: tuple[Example, ...]
    labels: int
    seed: int

    HELD = "the test split holds {n} questions; ask for fewer"

    def question(self, index: int) -> tuple[Example, list[int], int]:
        """Question ``index``, its label mapping and its seed."""
        example = self.row(index)
        local = question_seed(example.text, self.seed)
        return example, label_mapping(self.labels, local), local

    def items(self, index: int, shots: int) -> tuple[list[str], str, str]:
        """Question ``index``'s first ``shots`` demonstration items, its text and its answer."""
        example, mapping, local = self.question(index)
        demos = balanced_rounds(list(self.train), shots, local)
        texts = [ITEM.format(text=d.text, label=mapping[d.label]) for d in demos]
        return texts, example.text, str(mapping[example.label])


def _examples(rows, source: IclSource, where: str) -> list[Example]:
    """The rows as examples. A label outside ``0 .. labels - 1`` is refused, naming the row: a label past
    the list has no place in the question's mapping, and a negative one would index it from the end,
    silently taking the last label's meaning."""
    examples = []
    for number, row in enumerate(rows, 1):
        example = Example(str(row[source.text_field]), int(row[source.label_field]))
        if not 0 <= example.label < source.labels:
            raise CocaEvalError(
                f"{where} row {number}: {source.label_field} {example.label} is not one of the task's "
                f"{source.labels} labels (0 to {source.labels - 1})"
            )
        examples.append(example)
    return examples


def split_names(source: IclSource, data: str | None, task: str) -> dict[str, str]:
    """How a split is named in a message: its file under ``--data``, else the hub id and split."""
    if data is not None and data != "hub":
        folder = Path(data).expanduser() / "icl" / task
        return {"train": str(folder / "train.jsonl"), "test": str(folder / "test.jsonl")}
    return {
        split: f"{source.hub_id} {name}" for split, name in (("train", source.train), ("test", source.test))
    }


def load_split_rows(source: IclSource, data: str | None, task: str):
    """The train and test rows: from ``--data DIR/icl/<task>/{train,test}.jsonl`` when given, else the
    hub through ``datasets`` (one line naming the id and ``--data`` when it cannot be reached)."""
    if data is not None and data != "hub":  # --data hub: the ICL sets come from the hub as they are
        folder = Path(data).expanduser() / "icl" / task
        splits = ("train", "test") if source.test is not None else ("train",)
        files = {split: folder / f"{split}.jsonl" for split in splits}
        if not all(f.is_file() for f in files.values()):
            named = " and ".join(f"icl/{task}/{split}.jsonl" for split in splits)
            raise CocaEvalError(
                f"{task}: --data {data} has no {named} (rows with {source.text_field!r} and an integer "
                f"{source.label_field!r})"
            )
        return _jsonl(files["train"]), (_jsonl(files["test"]) if "test" in files else None)
    import datasets

    try:
        loaded = datasets.load_dataset(source.hub_id, source.config)
    except Exception as exc:  # offline, a missing id, a changed script: one line, the remedy named
        named = source.hub_id + (f" ({source.config})" if source.config else "")
        raise CocaEvalError(
            f"{task} reads {named} from the hub, "
            f"which failed ({type(exc).__name__}); save its splits as --data DIR/icl/{task}/train.jsonl "
            "and test.jsonl"
        ) from None
    train = loaded[source.train]
    if source.test is None:
        return train, None
    return train, loaded[source.test]


def _jsonl(path: Path) -> list[dict]:
    from coca_eval.data.published_rows import json_lines

    return json_lines(path.read_text(encoding="utf-8"), path, by_line=True)


def split_tenth(rows: list[Example], seed: int) -> tuple[list[Example], list[Example]]:
    """NLU's one split cut as ``train_test_split(test_size=0.1, seed)``: a permutation by numpy's
    generator, the first ceil(10 %) for test, the rest for train."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(rows))
    n_test = math.ceil(0.1 * len(rows))
    return [rows[int(i)] for i in order[n_test:]], [rows[int(i)] for i in order[:n_test]]


def choose_questions(test: list[Example], samples: int, seed: int) -> list[Example]:
    """HELMET's questions: all of a split no larger than ``samples``; else shuffled with the seed (numpy's
    generator, as ``datasets``' ``shuffle``) and cut by balanced rounds."""
    import numpy as np

    if len(test) <= samples:
        return list(test)
    order = np.random.default_rng(seed).permutation(len(test))
    return balanced_rounds([test[int(i)] for i in order], samples, seed)


@cache
def load_icl_set(task: str, data: str | None, samples: int, seed: int) -> IclSet:
    source = SOURCES[task]
    train_rows, test_rows = load_split_rows(source, data, task)
    names = split_names(source, data, task)
    try:
        train = _examples(train_rows, source, names["train"])
        test = _examples(test_rows, source, names["test"]) if test_rows is not None else None
    except (KeyError, TypeError, ValueError) as exc:
        raise CocaEvalError(
            f"{task}: a row lacks {source.text_field!r} or an integer {source.label_field!r} ({exc})"
        ) from None
    if test is None:
        train, test = split_tenth(train, seed)
    if not train or not test:
        raise CocaEvalError(f"{task}: an empty split")
    return IclSet(task, tuple(choose_questions(test, samples, seed)), tuple(train), source.labels, seed)


def draw_icl(task, rng: random.Random, kit: Kit, key: SampleKey, data: IclSet, shots: int) -> Draw:
    """Exact protocol: HELMET's balanced demonstrations for ``shots`` (its count at its longest length)
    in order while they fit, the last one cut; more rounds (four times the shots) only where those do
    not fill N."""
    example, mapping, local = data.question(key.index)

    def fill(budget: int) -> Context:
        nonlocal shots
        while True:
            items, _, _ = data.items(key.index, shots)
            pieces = [kit.pieces.fresh(("\n\n" if i else "") + item) for i, item in enumerate(items)]
            if sum(map(len, pieces)) >= budget or shots >= 1_000_000:
                break
            shots *= 4
        if sum(map(len, pieces)) < budget:
            raise TooShort(budget - sum(map(len, pieces)), "the training split's examples")
        stream = take(iter(pieces), budget)
        return Context(stream.ids, 0, {"shots": len(stream.bounds) - 1})

    fields = {"label": "{label}", "question": example.text}
    return Draw(fields, (str(mapping[example.label]),), fill, prefix_shared=False)
