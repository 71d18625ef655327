"""HELMET prompts under both protocols.

**exact**: every prompt is exactly N minus the answer budget tokens, built by the generation base's
exact-length builder. A HELMET task is turned into the builder's task form (template, answer prefix, a
draw of its samples), so the token accounting, BOS, chat frame and the check of every prompt's length
are the ones every exact-length family's prompts go through (:mod:`coca_eval.generation.assembly`).

**helmet**: HELMET's own prompt: its file with k units for N, its text, tokenised as its ``tokenize()``
(``model_utils.py``) does, and cut as it cuts: when the prompt is longer than N minus the budget, the
context alone is tokenised (special tokens included, as HELMET calls the tokenizer) and cut at the
character where its last ``excess`` tokens begin (a slow tokenizer: decoded without them), then the
prompt is built and tokenised again. A prompt may then be a little shorter than N minus the budget;
each sample records its length and how many context tokens were cut.

HELMET's layout differs from RULER's in two places, both HELMET's (``prompt_template`` in its
``data.py``): without a chat template its answer prefix (``system_template``) follows the question after
a newline, and with one the assistant's turn opens empty (HELMET renders the user message with
``add_generation_prompt`` and nothing after it).

The recall tasks keep their RULER task's name for the draws, so ``ruler_niah_mk_2`` at N draws the
keys and values RULER's ``niah_multikey_2`` draws at N with the same seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import PromptSample, PromptTask
from coca_eval.helmet import icl, json_kv, long, rag, recall_files, rerank
from coca_eval.helmet.tasks import HELMET_LENGTHS, HELMET_LONG, HELMET_TASKS, HelmetTask

# The text of each family's prompt: HELMET's user template and its answer prefix (system template)
LAYOUTS = {
    "json_kv": (json_kv.TEMPLATE, json_kv.ANSWER_PREFIX),
    "rag": (rag.TEMPLATE, rag.ANSWER_PREFIX),
    "icl": (icl.TEMPLATE, icl.ANSWER_PREFIX),
    "rerank": (rerank.TEMPLATE, rerank.ANSWER_PREFIX),
}
LONG_FAMILIES = ("narrativeqa", "infbench", "multi_lexsum")  # laid out per task (long.LAYOUTS)
DRAWS = {"rag": rag.draw_rag, "icl": icl.draw_icl, "rerank": rerank.draw_rerank}
DRAWS.update(dict.fromkeys(LONG_FAMILIES, long.draw_long))
DATA_FAMILIES = tuple(DRAWS)  # the families that read data (the others are generated)


def ruler_task(name: str) -> Any:
    """RULER's definition of one of its tasks, for HELMET's recall tasks built on it: a registry
    look-up, so HELMET reuses RULER's tasks without importing the RULER family."""
    from coca_eval.taskspec import TASKS

    return TASKS.get("ruler").definitions().get(name)


@dataclass(frozen=True)
class Sources:
    """Where a run's data comes from and which of it: ``--data``, ``--seed``, and the samples per task
    (a count, or a function of the task's name: HELMET picks its questions by how many it wants)."""

    data: str | None
    seed: int
    samples: int | Callable[[str], int]

    def count(self, task: str) -> int:
        return self.samples(task) if callable(self.samples) else self.samples


def exact_units(task: HelmetTask) -> int:
    """The HELMET file the exact protocol reads: the short configs' with the most units per question
    (64k's). Its 128k file is left to ``--protocol helmet``: reading it under ``exact`` would change the
    draws and files of every length (ICL's balanced rounds depend on the shot count)."""
    return max((k for n, k in task.units.items() if n in HELMET_LENGTHS), default=0)


def helmet_units(task: HelmetTask, length: int) -> int:
    """HELMET's k at ``length``, or the one-line error of a length HELMET has no file for."""
    k = task.helmet_units(length)
    if k is None:
        lengths = ", ".join(str(n) for n in task.units)
        raise CocaEvalError(
            f"--protocol helmet: HELMET has no {task.name} file for N = {length} (its lengths: {lengths}); "
            "use --protocol exact for other lengths"
        )
    return k


def load_family_data(task: HelmetTask, sources: Sources, k: int):
    """What a data-reading family draws from (the RAG questions and demonstrations of the k file)."""
    if task.family == "rag":
        return rag.load_qa_set(task.name, sources.data, k, sources.count(task.name), sources.seed, task.shots)
    if task.family == "icl":  # the same data at every length: k is the shot count, drawn per question
        return icl.load_icl_set(task.name, sources.data, sources.count(task.name), sources.seed)
    if task.family == "rerank":
        return rerank.load_rerank_set(sources.data, k, sources.count(task.name), sources.seed, task.shots)
    if task.family in LONG_FAMILIES:  # one document per question, the same file at every length
        return long.load_long_set(task.name, sources.data, sources.count(task.name), sources.seed, task.shots)
    raise ValueError(f"HELMET family {task.family!r} reads no data")


def helmet_data(task: HelmetTask, sources: Sources, length: int):
    """What ``--protocol helmet`` reads for ``task`` at ``length``: HELMET's file for it (its k units for
    N; the recall tasks' generated files too), the questions HELMET picks from it."""
    count = sources.count(task.name)
    if task.family == "ruler":
        relative = recall_files.RULER_FILE.format(task=task.ruler_task, length=length)
        return recall_files.load_rows(task.name, relative, sources.data, count, sources.seed, "ruler")
    if task.family in LONG_FAMILIES:
        if length not in (*HELMET_LENGTHS, HELMET_LONG):
            raise CocaEvalError(
                f"--protocol helmet: HELMET runs {task.name} at 8k, 16k, 32k, 64k and 128k, not "
                f"N = {length}; use --protocol exact for other lengths"
            )
        return load_family_data(task, sources, 0)
    k = helmet_units(task, length)
    if task.family == "json_kv":
        relative = recall_files.KV_FILE.format(k=k)
        return recall_files.load_rows(task.name, relative, sources.data, count, sources.seed, "json_kv")
    return load_family_data(task, sources, k)


def answerless_rows(tasks, protocol: str, lengths, sources: Sources) -> dict[str, list[dict]]:
    """Per RAG task, per file a run read (the exact protocol's one file; HELMET's file per length), how
    many of its chosen questions no passage answers (:func:`coca_eval.helmet.rag.answerless`)."""
    found: dict[str, list[dict]] = {}
    for task in tasks:
        if task.family != "rag":
            continue
        ks = [exact_units(task)] if protocol == "exact" else sorted({helmet_units(task, n) for n in lengths})
        for k in ks:
            rows = load_family_data(task, sources, k).rows
            entry = {"passages": k, "questions": len(rows), "answerless": sum(map(rag.answerless, rows))}
            found.setdefault(task.name, []).append(entry)
    return found


def helmet_layout(task: HelmetTask) -> tuple[str, str]:
    """HELMET's user template and answer prefix for ``task`` (a RULER task's in HELMET's wording)."""
    if task.family == "ruler":
        ruler = ruler_task(task.ruler_task)
        return ruler.wording(ruler.template), ruler.wording(ruler.answer_prefix).lstrip()
    return long.LAYOUTS[task.name] if task.family in LONG_FAMILIES else LAYOUTS[task.family]


def helmet_fields(task: HelmetTask, data, length: int, index: int) -> tuple[dict[str, str], tuple[str, ...]]:
    """Question ``index``'s template fields (context included) and references, HELMET's at ``length``."""
    if task.family == "ruler":
        return recall_files.ruler_fields(data, index, task.name)
    if task.family == "json_kv":
        return recall_files.kv_fields(data, index, task.shots)
    if task.family in LONG_FAMILIES:
        item = data.item(index)
        return dict(item.fields), item.answers
    k = helmet_units(task, length)
    if task.family == "rag":
        row, fields = rag.fields(data, index)
        return {**fields, "context": rag.passages_text(row.ctxs)}, tuple(row.answers)
    if task.family == "rerank":
        return rerank.helmet_fields(data, index)
    items, question, answer = data.items(index, k)
    return {"context": "\n\n".join(items), "question": question, "label": "{label}"}, (answer,)


def prompt_task(task: HelmetTask, chat: bool, sources: Sources | None = None) -> Any:
    """``task`` as the exact-length builder takes it (a RULER recall task: RULER's own definition),
    laid out as HELMET lays it out with or without a chat template (exact protocol)."""
    if task.family == "ruler":
        ruler = ruler_task(task.ruler_task)
        prefix = ruler.answer_prefix.lstrip()
    else:
        template, prefix = helmet_layout(task)
        if task.family == "json_kv":
            family: Any = "coca_eval.helmet.json_kv:draw_json_kv"
        else:
            data = load_family_data(task, sources, exact_units(task))
            extra = {"shots": exact_units(task)} if task.family == "icl" else {}
            family = partial(DRAWS[task.family], data=data, **extra)
        ruler = PromptTask(task.name, family, task.answer_budget, template=template)
    return replace(ruler, answer_budget=task.answer_budget, answer_prefix="" if chat else "\n" + prefix)


class HelmetPromptBuilder:
    """HELMET's prompts for one tokenizer and chat frame, on the base's exact-length builder (``ruler``,
    the name it had when that builder was RULER's).

    ``tokenizer`` and ``chat_template`` (the template's text, None without one) serve the helmet
    protocol, which tokenises HELMET's text whole."""

    def __init__(
        self,
        ruler: Any,
        protocol: str = "exact",
        sources: Sources | None = None,
        tokenizer: Any = None,
        chat_template: str | None = None,
    ) -> None:
        self.ruler, self.protocol, self.sources = ruler, protocol, sources
        self.ruler.kind = "HELMET task"
        self.chat = ruler.chat is not None
        self.tokenizer, self.chat_template = tokenizer, chat_template

    def build(self, task: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        spec = HELMET_TASKS.get(task)
        if self.protocol == "helmet":
            return self._helmet(spec, length, samples)
        built = prompt_task(spec, self.chat, self.sources)
        return [self.ruler.build_one(built, length, i, seed, prompt_length) for i in range(samples)]

    def haystack_name(self, task: HelmetTask) -> str | None:
        """The haystack of a RULER recall task (None for the others: they bring their own context)."""
        if task.family != "ruler":
            return None
        return self.ruler.haystack_name(ruler_task(task.ruler_task))

    def _helmet(self, task: HelmetTask, length: int, samples: int) -> list[PromptSample]:
        from coca_eval.helmet.truncation import helmet_tokenize

        data = helmet_data(task, self.sources, length)
        template, prefix = helmet_layout(task)
        out = []
        for index in range(samples):
            fields, answers = helmet_fields(task, data, length, index)
            prompt = helmet_tokenize(
                self.tokenizer, template, prefix, fields, self.chat_template, length, task.answer_budget
            )
            detail = {"truncated_tokens": prompt.cut, "prompt_tokens": len(prompt.ids)}
            if task.units:
                detail[{"icl": "shots", "json_kv": "pairs"}.get(task.family, "passages")] = task.units[length]
            if task.judged:  # what HELMET's judge reads besides the output
                detail["judge"] = data.item(index).judge
            start = prompt.text_start
            out.append(
                PromptSample(task.name, index, prompt.ids, answers, 0, detail, (start, len(prompt.ids)))
            )
        return out
