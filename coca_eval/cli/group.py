"""A click group whose commands come from registries and load only when used.

Task commands come from the task registry (each spec's ``command``); every other command from
:data:`COMMANDS`. Mounting another package's command or group is one line at its import, e.g.
``COMMANDS.add("mine", CommandEntry("my_package.cli:mine", "What mine does ..."))``, or one
module name appended to ``COMMANDS.builtins``. The listing in ``--help`` uses each entry's help text,
so it imports none of the commands.
"""

from __future__ import annotations

from dataclasses import dataclass

import click

from coca_eval.registry import Registry, resolve


@dataclass(frozen=True)
class CommandEntry:
    """A lazy ``"module:attr"`` click command and the one-line help the listing shows."""

    target: str
    help: str


COMMANDS = Registry[CommandEntry]("command", builtins=("coca_eval.cli.builtin",))


def command_entries() -> dict[str, CommandEntry]:
    """Task commands first (registration order), then the others."""
    from coca_eval.taskspec import TASKS

    entries = {
        name: CommandEntry(spec.command, spec.description)
        for name, spec in TASKS.items()
        if spec.command is not None and spec.group is None
    }
    ordered = dict(sorted(entries.items(), key=lambda item: TASKS.names().index(item[0])))
    return {**ordered, **{name: COMMANDS.get(name) for name in COMMANDS.names()}}


class RegistryGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(command_entries())

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """Click's, with the nearest command names offered for a mistyped one (``rular``: ``ruler``)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in command_entries():
            import difflib

            near = difflib.get_close_matches(name, list(command_entries()), n=2, cutoff=0.6)
            if near:
                ctx.fail(f"No such command {name!r}. Did you mean {' or '.join(map(repr, near))}?")
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        entry = command_entries().get(name)
        return None if entry is None else resolve(entry.target)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, entry.help) for name, entry in command_entries().items()]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
