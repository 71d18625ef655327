"""Packaging: the console script points into the package, and the wheel installs no top-level ``cli``."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_console_script_points_into_the_package_and_the_wheel_holds_only_coca_eval():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["coca-eval"] == "coca_eval.cli:main"
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["coca_eval"] and wheel["only-include"] == ["coca_eval"]
    installed_top_level = {Path(p).parts[0] for p in wheel["force-include"].values()}
    assert installed_top_level == {"coca_eval"}


def test_the_checkout_entry_is_the_package_command():
    import cli
    from coca_eval.cli import main

    assert cli.main is main
