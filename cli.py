"""A checkout's entry point: ``python cli.py ppl ...`` runs the ``coca-eval`` command.

The command lives in :mod:`coca_eval.cli` (the installed console script points there); this file is
not installed.
"""

from coca_eval.cli import cli, main, run

__all__ = ["cli", "main", "run"]

if __name__ == "__main__":
    run()
