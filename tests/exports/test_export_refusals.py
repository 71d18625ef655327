"""An export that cannot be made is one line and exit 2, never a traceback or a terminal full of a
library's logs: ``export hub`` with no route to the Hub (a refused connection, offline mode), ``export
wandb`` whose ``--dir`` holds a folder W&B cannot write (its logs poured onto the terminal and the
command exited 0), and ``export wandb`` without a key and without ``--offline``, which names both
remedies."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.exports.conftest import cli

pytest.importorskip("wandb")


def _home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "HF_HOME": str(home / "hf"), "MPLCONFIGDIR": str(tmp_path / "mpl")}


def _one_line(done, *fragments: str) -> str:
    err = done.stderr.strip()
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and err.count("\n") == 0, err[-2000:]
    assert err.startswith("coca-eval: error:"), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    return err


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        return held.getsockname()[1]


@pytest.mark.parametrize("how", ["connection refused", "offline mode"])
def test_export_hub_with_no_route_to_the_hub_is_one_line(ruler_run, tmp_path, how):
    env = {"HF_TOKEN": "hf_test", "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}", "HF_HUB_OFFLINE": "0"}
    if how == "offline mode":
        env["HF_HUB_OFFLINE"] = "1"
    args = ["export", "hub", str(ruler_run), "--repo-id", "me/ruler", "--out", "kept"]
    done = cli(*args, cwd=tmp_path, env={**_home(tmp_path), **env})
    _one_line(done, "the Hub could not be reached to upload to me/ruler", "--out keeps the files")
    assert "uploaded:" not in done.stdout and (tmp_path / "kept" / "README.md").is_file()


@pytest.mark.parametrize("taken", ["cache", "config", "data"])
def test_export_wandb_into_a_folder_it_cannot_write_is_one_line(passkey_run, tmp_path, taken):
    """One of the folders W&B keeps under ``--dir`` taken by a file: W&B went on, wrote its logs to
    the terminal and the command exited 0 (cache), or stopped in its own error (data)."""
    (tmp_path / "wb" / "wandb").mkdir(parents=True)
    (tmp_path / "wb" / "wandb" / taken).write_text("a file, not a folder")
    args = ["export", "wandb", str(passkey_run), "--offline", "--dir", "wb", "--project", "p"]
    done = cli(*args, cwd=tmp_path, env=_home(tmp_path))
    _one_line(done, "--dir wb: W&B cannot write", str(Path("wandb") / taken))
    assert "W&B run" not in done.stdout
    assert not list((tmp_path / "wb" / "wandb").glob("offline-run-*"))


def test_export_wandb_without_a_key_or_offline_names_both_remedies(passkey_run, tmp_path, monkeypatch):
    for variable in ("WANDB_API_KEY", "WANDB_MODE", "WANDB_DIR"):
        monkeypatch.delenv(variable, raising=False)  # a fresh home holds no login either
    args = ["export", "wandb", str(passkey_run), "--dir", "wb", "--project", "p"]
    done = cli(*args, cwd=tmp_path, env=_home(tmp_path))
    _one_line(done, "No API key configured", "wandb login", "--offline")
