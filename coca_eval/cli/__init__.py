"""The ``coca-eval`` command: parse options, call :mod:`coca_eval.api`, render with rich.

No evaluation logic lives here. Every user-facing problem is one line on stderr and exit code 2.
The group's commands come from registries (each task's ``command`` and :data:`COMMANDS`) and are
imported only when run or asked for help, so ``coca-eval --help`` imports neither torch nor a task.
"""

from __future__ import annotations

import sys

import click

from coca_eval import __version__
from coca_eval.cli.group import COMMANDS, CommandEntry, RegistryGroup
from coca_eval.cli.output import error_line, stderr, stdout
from coca_eval.errors import CocaEvalError

__all__ = ["COMMANDS", "CommandEntry", "cli", "main"]


@click.group(
    cls=RegistryGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
)
@click.version_option(__version__, prog_name="coca-eval")
def cli() -> None:
    """Long-context evaluation: sliding-window perplexity (and more) for CoCA and RoPE-scaled models.

    \b
    coca-eval ppl --stride 512                    # the default preset's rows and lengths
    coca-eval ppl --preset pg19 --model DIR --rope none --rope dynamic:4
    coca-eval tasks | coca-eval models
    """


_NoArgsIsHelp = getattr(click.exceptions, "NoArgsIsHelpError", ())


def main(argv: list[str] | None = None) -> None:
    """Entry point: click in non-standalone mode so every error is exactly one line."""
    try:
        cli.main(args=argv, prog_name="coca-eval", standalone_mode=False)
    except CocaEvalError as exc:
        error_line(f"coca-eval: error: {exc}")
        sys.exit(2)
    except _NoArgsIsHelp as exc:
        stdout().print(exc.ctx.get_help() if exc.ctx else "", markup=False, highlight=False)
        sys.exit(0)
    except click.ClickException as exc:
        error_line(f"coca-eval: error: {exc.format_message()}")
        sys.exit(exc.exit_code if exc.exit_code != 1 else 2)
    except (KeyboardInterrupt, click.exceptions.Abort):
        stderr().print("coca-eval: interrupted; finished work is journaled, rerun the same command to resume")
        sys.exit(130)
