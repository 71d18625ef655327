"""The checkout's own plug-ins, declared for the test session when the installed metadata lacks them.

``pyproject.toml`` declares the plug-ins this repository ships (the zoo among them) in the
``coca_eval.plugins`` entry-point group, but an editable install reads entry points from the metadata
written when it was installed: a checkout that added one since (until ``pip install -e .`` runs again)
would test without it. This writes the missing declarations as a small ``.dist-info`` in a temporary
directory on ``sys.path`` and ``PYTHONPATH`` (so CLI subprocesses see them too); where the install is
current, it writes nothing.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from importlib.metadata import entry_points
from pathlib import Path

from coca_eval.plugins import GROUP

ROOT = Path(__file__).resolve().parents[1]
DIST_INFO = "coca_eval_checkout_plugins-0.dist-info"


def declared_plugins() -> dict[str, str]:
    """The checkout's ``[project.entry-points."coca_eval.plugins"]``: name -> ``module:attr``."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: CI installs the checkout, so its metadata is current
        return {}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return dict(project.get("entry-points", {}).get(GROUP, {}))


def declare_missing_plugins() -> dict[str, str]:
    """Make the checkout's plug-ins the installed metadata lacks visible; returns those declared here."""
    installed = {point.name for point in entry_points(group=GROUP)}
    missing = {name: value for name, value in declared_plugins().items() if name not in installed}
    if not missing:
        return {}
    directory = Path(tempfile.mkdtemp(prefix="coca-eval-plugins-"))
    atexit.register(shutil.rmtree, directory, True)
    info = directory / DIST_INFO
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: coca-eval-checkout-plugins\nVersion: 0\n", encoding="utf-8"
    )
    lines = [f"[{GROUP}]", *(f"{name} = {value}" for name, value in missing.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.path.insert(0, str(directory))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(directory), os.environ.get("PYTHONPATH")]))
    return missing
