"""``--help`` shows each preset-valued option's value from the preset in force: the command's default
preset, or the ``--preset`` given before ``--help`` (docs/running.md says exactly this)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli


def shown(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args, terminal_width=400)
    assert result.exit_code == 0, result.output
    return re.sub(r"\s+", " ", result.output)


@pytest.mark.parametrize(
    ("args", "expected", "absent"),
    [
        (["ppl", "--help"], ["(preset zoo: 2)", "(preset zoo: 512..4k)"], "(preset pg19:"),
        (
            ["ppl", "--preset", "pg19", "--help"],
            ["(preset pg19: 100)", "(preset pg19: 512..32k)"],
            "(preset zoo:",
        ),
        (["ppl", "--preset", "embedded", "--help"], ["(preset embedded: 4)"], "(preset zoo:"),
        (["passkey", "--help"], ["(preset zoo-passkey: 25)", "(preset zoo-passkey: 16)"], "(preset passkey:"),
        (["passkey", "--preset", "passkey", "--help"], ["(preset passkey: 100)"], "(preset zoo-passkey:"),
    ],
)
def test_help_shows_the_values_of_the_preset_in_force(args, expected, absent):
    text = shown(args)
    for value in expected:
        assert value in text
    assert absent not in text


def test_a_preset_after_help_leaves_the_default_presets_values():
    assert "(preset zoo: 2)" in shown(["ppl", "--help", "--preset", "pg19"])


def test_dataset_help_lists_the_data_sources_registered_after_the_command_was_made():
    from coca_eval.data.sources import DATA_SOURCES, DataSource

    assert "later:NAME" not in shown(["ppl", "--help"])  # the command and its options exist by now
    DATA_SOURCES.add("later:", DataSource("later:NAME", lambda source, text_field: []))
    try:
        assert "later:NAME" in shown(["ppl", "--help"])
    finally:
        DATA_SOURCES.remove("later:")


def test_no_option_shows_two_defaults():
    """An option's help names one default: the preset's where it sets the option, else the task's own
    (``--protocol``'s help stated ``[default: exact]`` beside the preset's ``exact``)."""
    import click

    from coca_eval.cli import cli

    for name in ("ppl", "passkey", "ruler", "helmet", "babilong"):
        command = cli.get_command(click.Context(cli), name)
        ctx = click.Context(command, info_name=name)
        for param in command.params:
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is not None:
                assert record[1].count("[default:") <= 1, (name, record)
