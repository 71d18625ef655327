"""Where the trained zoo checkpoints ship: inside the package, so a wheel install has them too."""

from __future__ import annotations

from pathlib import Path

CHECKPOINTS = Path(__file__).parent / "checkpoints"


def shipped_dir(name: str) -> Path | None:
    """The shipped ``from_pretrained`` directory of a zoo model, or None when it was not trained yet."""
    path = CHECKPOINTS / name
    return path if (path / "config.json").is_file() else None
