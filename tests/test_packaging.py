"""Packaging: the console script points into the package, the wheel installs no top-level ``cli``, and
the sdist holds what installs the package (its code, presets and report definitions) and no more."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_console_script_points_into_the_package_and_the_wheel_holds_only_coca_eval():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["coca-eval"] == "coca_eval.cli:run"  # main, then a quick exit
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["coca_eval"] and wheel["only-include"] == ["coca_eval"]
    installed_top_level = {Path(p).parts[0] for p in wheel["force-include"].values()}
    assert installed_top_level == {"coca_eval"}


def test_the_checkout_entry_is_the_package_command():
    import cli
    from coca_eval.cli import main, run

    assert cli.main is main and cli.run is run


def test_the_sdist_builds_the_wheel_without_the_repositorys_results(tmp_path):
    """The sdist holds what installs the package (no reports/ beyond the report definitions, no
    benchmarks/, scripts/ or tests/), and the wheel built from it, as pip builds one, still carries the
    presets, the report definitions and the shipped zoo weights and presets."""
    import tarfile
    import zipfile

    sdist_builder = pytest.importorskip("hatchling.builders.sdist").SdistBuilder
    wheel_builder = pytest.importorskip("hatchling.builders.wheel").WheelBuilder

    (sdist,) = sdist_builder(str(ROOT)).build(directory=str(tmp_path / "dist"), versions=["standard"])
    with tarfile.open(sdist) as archive:
        names = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
        archive.extractall(tmp_path / "src", filter="data")
    assert {name.split("/")[0] for name in names} >= {"coca_eval", "tasks", "reports", "pyproject.toml"}
    assert not {"benchmarks", "scripts", "tests"} & {name.split("/")[0] for name in names}
    assert [n for n in names if n.startswith("reports/") and not n.startswith("reports/definitions")] == []

    (unpacked,) = (tmp_path / "src").iterdir()
    (wheel,) = wheel_builder(str(unpacked)).build(directory=str(tmp_path / "wheel"), versions=["standard"])
    installed = zipfile.ZipFile(wheel).namelist()
    definitions = sorted(p.name for p in (ROOT / "reports" / "definitions").glob("*.yaml"))
    presets = sorted(p.name for p in (ROOT / "tasks").glob("*.yaml"))
    assert definitions and presets
    assert (
        sorted(Path(n).name for n in installed if n.startswith("coca_eval/_presets/reports/definitions/"))
        == definitions
    )
    assert sorted(Path(n).name for n in installed if n.startswith("coca_eval/_presets/tasks/")) == presets
    assert "coca_eval/zoo/checkpoints/zoo-rope/model.safetensors" in installed
    plugin_presets = sorted(p.name for p in (ROOT / "coca_eval" / "zoo" / "tasks").glob("*.yaml"))
    assert plugin_presets  # the zoo plug-in's own presets, found through the directory it registers
    assert sorted(Path(n).name for n in installed if n.startswith("coca_eval/zoo/tasks/")) == plugin_presets
