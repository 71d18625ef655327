"""The one exception type the CLI turns into a one-line message and exit code 2.

Library code raises :class:`CocaEvalError` for anything the user can fix (bad input, missing model,
corrupt results file). Everything else is a bug and keeps its traceback.
"""


class CocaEvalError(Exception):
    """A problem with the user's input or environment, reported without a traceback."""


class NonFiniteOutput(Exception):
    """A model produced non-finite logits while answering: its answer, and so the cell's score, would be
    read from garbage. The runner turns it into an ``error`` cell that says where, never an ``ok`` one."""
