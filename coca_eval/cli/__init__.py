"""The ``coca-eval`` command: parse options, call :mod:`coca_eval.api`, render with rich.

No evaluation logic lives here. Every user-facing problem is one line on stderr and exit code 2.
The group's commands come from registries (each task's ``command`` and :data:`COMMANDS`) and are
imported only when run or asked for help, so ``coca-eval --help`` imports neither torch nor a task.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

import click

from coca_eval import __version__
from coca_eval.cli.group import COMMANDS, CommandEntry, RegistryGroup
from coca_eval.cli.output import error_line, stderr, stdout
from coca_eval.errors import CocaEvalError

__all__ = [
    "COMMANDS",
    "CommandEntry",
    "cli",
    "exit_status",
    "keep_freed_memory",
    "main",
    "run",
    "run_exit_handlers",
]


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


def run() -> None:
    """The ``coca-eval`` process (console script, ``python -m coca_eval``): :func:`main`, then an exit
    that skips the interpreter's teardown. Once torch and transformers are imported, finalising their
    modules takes about 0.8 s on a 2-core AVX-512 CPU (load 1-2), a cost every run paid after its
    results were written. What a normal exit does for the user still happens: the ``atexit`` handlers
    run (temporary folders, logging, leaving a process group) and the standard streams are flushed. A
    run that leaves a non-daemon thread behind exits the normal way, which waits for it. The process
    keeps the memory it frees (:func:`keep_freed_memory`)."""
    keep_freed_memory()
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exit_status(exc)
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    run_exit_handlers()
    os._exit(code)


def exit_status(exc: SystemExit) -> int:
    """The status the interpreter would exit with for ``exc`` (a message is printed, as it would be)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run_exit_handlers() -> None:
    """What a process must still do before ``os._exit``: the ``atexit`` handlers, then the streams."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()


M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's mallopt parameters (malloc.h)


def keep_freed_memory() -> bool:
    """Have glibc keep the memory a run frees for its next tensors instead of handing it back to the
    kernel. By default every block above a few MB is its own mapping, returned on free, so each
    forward pass of a model faults its activations in afresh, page by page: on a 2-core AVX-512 VM
    (load about 1.5) that was 8 % of a 2k or 8k forward of SmolLM2-135M (2.68 against 2.46 s; 0.6-1.1
    million page faults against 0.25), with the same peak memory. Off with
    ``COCA_EVAL_KEEP_FREED_MEMORY=0`` and on any other C library.
    Returns whether it took effect."""
    if os.environ.get("COCA_EVAL_KEEP_FREED_MEMORY", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # musl and other C libraries: their own rules
        return False
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, 2**31 - 1))
