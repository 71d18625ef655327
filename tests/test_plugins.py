"""Third-party plug-ins through the ``coca_eval.plugins`` entry-point group: a fake installed
distribution adds a task and a backend, and a broken one is a one-line error."""

from __future__ import annotations

import sys
import types
from importlib.metadata import EntryPoint

import pytest

from coca_eval import plugins
from coca_eval.backends.registry import BACKENDS, BackendEntry
from coca_eval.errors import CocaEvalError
from coca_eval.taskspec import TASKS, TaskSpec


@pytest.fixture
def fake_distribution(monkeypatch):
    """A module ``fake_coca_plugin`` with ``register()``, announced as an installed entry point."""
    module = types.ModuleType("fake_coca_plugin")

    def register() -> None:
        TASKS.add(
            "plugged", TaskSpec("plugged", 1, "score", lower_is_better=False, description="From a plug-in.")
        )
        BACKENDS.add("plugged", BackendEntry("fake_coca_plugin:load", "a plug-in backend"))

    module.register = register
    module.load = lambda method, request: ("loaded", method, request.device)
    monkeypatch.setitem(sys.modules, "fake_coca_plugin", module)
    point = EntryPoint("plugged", "fake_coca_plugin:register", plugins.GROUP)
    monkeypatch.setattr(plugins, "plugin_entry_points", lambda: [point])
    plugins.reset_plugins()
    yield
    for registry in (TASKS, BACKENDS):
        if "plugged" in registry.names():
            registry.remove("plugged")
    plugins.reset_plugins()


def test_an_entry_point_adds_a_task_and_a_backend(fake_distribution):
    assert plugins.load_plugins() == ["plugged"]
    assert TASKS.get("plugged").description == "From a plug-in."
    from coca_eval.backends.options import EngineOptions, load_backend
    from coca_eval.methods import make_method

    method = make_method("some/model", "none", None, "float32", "plugged")
    assert load_backend(method, "cpu", None, EngineOptions(), 64)[0] == "loaded"


def test_the_cli_lists_a_plugged_task_and_offers_a_plugged_backend(fake_distribution):
    from click.testing import CliRunner

    from coca_eval.cli import cli

    plugins.load_plugins()
    listing = CliRunner().invoke(cli, ["tasks"])
    assert listing.exit_code == 0 and "plugged" in listing.output
    help_text = CliRunner().invoke(cli, ["ppl", "--help"], terminal_width=200)
    assert "plugged" in help_text.output


def test_a_broken_plugin_is_a_one_line_error(monkeypatch):
    point = EntryPoint("broken", "no_such_module_for_coca:register", plugins.GROUP)
    monkeypatch.setattr(plugins, "plugin_entry_points", lambda: [point])
    plugins.reset_plugins()
    with pytest.raises(CocaEvalError, match="plug-in 'broken'"):
        plugins.load_plugins()
    plugins.reset_plugins()


COLLIDING_PLUGIN = """
import sys, types
from importlib.metadata import EntryPoint
from coca_eval import plugins

module = types.ModuleType("colliding_coca_plugin")

def register():
    from coca_eval.backends.registry import BACKENDS, BackendEntry
    from coca_eval.cli import COMMANDS, CommandEntry
    BACKENDS.add("collider", BackendEntry("colliding_coca_plugin:load", "registered before the clash"))
    COMMANDS.add("report", CommandEntry("colliding_coca_plugin:report", "Takes a built-in name."))

module.register = register
sys.modules[module.__name__] = module
point = EntryPoint("collider", "colliding_coca_plugin:register", plugins.GROUP)
plugins.plugin_entry_points = lambda: [point]
from coca_eval.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("args", [["--help"], ["report", "--help"], ["tasks"], ["ppl", "--help"]])
def test_a_plugin_taking_a_builtin_command_name_is_refused_in_one_line_and_the_cli_works(args):
    """A plug-in taking a built-in command's name: every command used to end in a traceback."""
    import subprocess

    result = subprocess.run([sys.executable, "-c", COLLIDING_PLUGIN, *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        "coca-eval: warning: plug-in 'collider' (colliding_coca_plugin:register) refused: "
        "command 'report' is already registered"
    ]
    assert "Traceback" not in result.stderr
    if args == ["--help"]:
        assert "Tables (Markdown" in result.stdout  # the built-in report, not the plug-in's
    if args == ["ppl", "--help"]:
        assert "collider" not in result.stdout  # what the refused plug-in registered first is undone
