"""The one exception type the CLI turns into a one-line message and exit code 2.

Library code raises :class:`CocaEvalError` for anything the user can fix (bad input, missing model,
corrupt results file). Everything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class CocaEvalError(Exception):
    """A problem with the user's input or environment, reported without a traceback."""


class NonFiniteOutput(Exception):
    """A model produced non-finite logits while answering: its answer, and so the cell's score, would be
    read from garbage. The runner turns it into an ``error`` cell that says where, never an ``ok`` one.

    ``rows`` maps each failed prompt of a batched call (its position in the call) to its message, so a
    task whose call held several cells' prompts can tell whose they were. ``samples``: the records of
    the cell's samples that were answered from finite logits, which its error cell keeps (one bad
    prompt does not discard the answers journaled beside it)."""

    def __init__(self, message: str, rows: dict[int, str] | None = None, samples: list | None = None) -> None:
        super().__init__(message)
        self.rows = dict(rows or {})
        self.samples = list(samples or [])

    @classmethod
    def of_rows(cls, failures: list[NonFiniteOutput]) -> NonFiniteOutput:
        """One error for every failed row of a call: the first row's message, every row's entry."""
        rows = {row: text for failure in failures for row, text in failure.rows.items()}
        return cls(str(failures[0]), rows)
