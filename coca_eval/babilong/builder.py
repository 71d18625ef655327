"""BABILong's prompts for one tokenizer, from either source.

``generate``: RULER's prompt builder fills BABILong's template to exactly N minus the answer budget
(:mod:`coca_eval.babilong.prompt_task`, :mod:`coca_eval.babilong.noise`). The questions are visited in
the task's seeded random order, less those over BABILong's line limit at N
(:mod:`coca_eval.babilong.draw`, counted in the cell); a question whose facts alone overfill N is
skipped and counted in the cell too, and the cell's samples are the first ones that fit, numbered in the
order they were drawn.

``babilong``: BABILong's prepared row formatted as its ``get_formatted_input`` does and tokenised
whole, as its evaluation does (with the tokenizer's special tokens; with a chat template, rendered by it
with the assistant's turn opened): its length is the row's, BABILong's ``1k`` meaning its own sample
size, not this N.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from coca_eval.babilong.data import babi_samples, babilong_rows
from coca_eval.babilong.draw import drawn_questions, line_limit
from coca_eval.babilong.noise import STORY_TOO_LONG
from coca_eval.babilong.prompt_task import prompt_task
from coca_eval.babilong.prompts import formatted_input
from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import PromptSample


class BabilongPromptBuilder:
    def __init__(
        self, ruler: Any, params: Any, tokenizer: Any = None, chat_template: str | None = None
    ) -> None:
        self.ruler, self.params = ruler, params
        self.ruler.kind = "BABILong task"
        self.tokenizer, self.chat_template = tokenizer, chat_template
        self.skipped: dict[tuple[str, int], int] = {}  # (task, length) -> bAbI samples too long for it
        self.over_limit: dict[tuple[str, int], int] = {}  # the same -> questions over BABILong's limit

    def build(self, task: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        if self.params.source == "babilong":
            return self._prepared(task, length, samples)
        stories = babi_samples(task, self.params.babi_data, self.params.seed)
        if samples > len(stories):
            raise CocaEvalError(
                f"{task} has {len(stories)} bAbI samples; ask for at most that many --samples"
            )
        spec = prompt_task(task, list(stories), self.params.prompt_parts)
        order, over = drawn_questions(stories, task, length, seed)
        out: list[PromptSample] = []
        skipped = 0
        for question in order:
            if len(out) == samples:
                break
            try:
                built = self.ruler.build_one(spec, length, question, seed, prompt_length)
            except CocaEvalError as exc:  # this story's facts overfill N: the next one stands in
                if STORY_TOO_LONG not in str(exc):
                    raise
                skipped += 1
                continue
            out.append(replace(built, index=len(out)))
        self.skipped[(task, length)], self.over_limit[(task, length)] = skipped, over
        if len(out) < samples:
            raise CocaEvalError(
                f"{task} at {length}: {len(out)} of its {len(stories)} bAbI samples fit ({over} have more "
                f"than BABILong's {line_limit(length)} lines at this length, {skipped} more facts than the "
                f"length holds); ask for at most {len(out)} --samples"
            )
        return out

    def haystack_name(self, task) -> str | None:
        return self.ruler.essay().name if self.params.source == "generate" else None

    def _prepared(self, task: str, length: int, samples: int) -> list[PromptSample]:
        rows = babilong_rows(task, length, self.params.data)
        if samples > len(rows):
            raise CocaEvalError(
                f"{task} at {length} has {len(rows)} rows; ask for at most that many --samples"
            )
        out = []
        for index, row in enumerate(rows[:samples]):
            ids = self._prepared_ids(task, length, index)
            bos = getattr(self.tokenizer, "bos_token_id", None)
            start = int(bool(ids) and bos is not None and ids[0] == bos)
            detail = {"question": row.question, "prompt_tokens": len(ids)}
            out.append(PromptSample(task, index, ids, (row.target,), 0, detail, (start, len(ids))))
        return out

    def longest_prepared(self) -> int:
        """The longest prompt, in tokens, among the rows the run reads (its ``--samples``, or under
        ``auto`` its ``--max-samples``, of each task and length; tokenised here, and again when built:
        keeping every prompt's ids would hold the whole run in memory)."""
        samples = self.params.samples
        count = samples if isinstance(samples, int) else self.params.max_samples
        longest = 0
        for task in self.params.tasks:
            for length in self.params.lengths:
                rows = babilong_rows(task, length, self.params.data)
                for index in range(min(len(rows), count or len(rows))):
                    longest = max(longest, len(self._prepared_ids(task, length, index)))
        return longest

    def _prepared_ids(self, task: str, length: int, index: int) -> list[int]:
        row = babilong_rows(task, length, self.params.data)[index]
        return self._tokenize(formatted_input(task, row.input, row.question, self.params.prompt_parts))

    def _tokenize(self, text: str) -> list[int]:
        if self.chat_template is None:
            return list(self.tokenizer(text).input_ids)
        rendered = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": text}],
            chat_template=self.chat_template,
            tokenize=False,
            add_generation_prompt=True,
        )
        return list(self.tokenizer(rendered, add_special_tokens=False).input_ids)
