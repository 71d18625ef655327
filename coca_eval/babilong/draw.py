"""Which bAbI questions a ``--source generate`` cell asks, and in what order.

BABILong's generator (``data/create_tasks.py`` at 7a6efee) reads a task's single-question samples
(``get_dataset_df``: a story asking several questions gives one sample per question, holding the facts
up to it), keeps those of at most ``(length - 300) // 8`` lines, facts and question together, at a
length of ``length`` GPT-2 tokens (l. 32, 51-52; ``babilong_utils.py`` l. 55-56), shuffles the indices
(``np.random.shuffle``, l. 64-66) and takes the first 100. Here:

- the questions are visited in one random order per task, seeded by the run's ``--seed``: the same in
  every process, so a resumed run, shards and their merge ask the same questions, and the same at every
  length, so two lengths ask the same questions wherever both keep them (BABILong shuffles each length
  apart);
- a length keeps BABILong's line limit at the length of the same name: N tokens here are read as
  BABILong's ``N / 1024`` k, that is ``N x 1000 / 1024`` of its tokens (``1k``: 1024 here, 1000 there),
  so a 1k cell draws from the questions BABILong's 1k set may hold (at most 87 lines). Whether a kept
  question's facts then fit N in the model's tokens is the prompt builder's check
  (:mod:`coca_eval.babilong.builder`): a question that does not fit is skipped and counted.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from coca_eval.babilong.babi import BabiSample

PROMPT_SHARE = 300  # BABILong keeps 300 of a length's tokens for the prompt (create_tasks.py l. 32)
TOKENS_PER_LINE = 8  # and allows a line (a fact or the question) per 8 of the rest (l. 51)


def babilong_tokens(length: int) -> int:
    """The tokens BABILong's length of the same name holds: ``N`` here is ``N / 1024`` k there."""
    return length * 1000 // 1024


def line_limit(length: int) -> int:
    """The most lines (facts and the question) BABILong keeps in a question at ``length`` (see the module
    doc); 0 where the length holds no more than its prompt."""
    return max(0, (babilong_tokens(length) - PROMPT_SHARE) // TOKENS_PER_LINE)


def draw_order(count: int, task: str, seed: int) -> list[int]:
    """The task's ``count`` questions in the order a cell visits them: a permutation seeded by ``task``
    and ``seed`` alone (a string seed hashes the same in every process)."""
    order = list(range(count))
    random.Random(f"coca-eval-babilong-draw:{seed}:{task}").shuffle(order)
    return order


def drawn_questions(
    samples: Sequence[BabiSample], task: str, length: int, seed: int
) -> tuple[list[int], int]:
    """The indices of the questions a cell at ``length`` may ask, in the order it visits them, and how
    many of the task's questions BABILong's line limit drops at that length."""
    limit = line_limit(length)
    order = draw_order(len(samples), task, seed)
    kept = [i for i in order if len(samples[i].facts) + 1 <= limit]
    return kept, len(samples) - len(kept)
