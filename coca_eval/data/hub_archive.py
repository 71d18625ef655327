"""One file out of an archive that a dataset repository on the hub keeps (HELMET's ``data.tar.gz``,
bAbI's ``tasks_1-20_v1-2.tar.gz``).

``huggingface_hub`` downloads the archive once into its own cache; the member a run needs is then
written under coca-eval's cache, at a path this project chooses (never the one the archive names), so
an archive can neither place files elsewhere nor be unpacked whole.
"""

from __future__ import annotations

import fnmatch
import tarfile
from pathlib import Path

from coca_eval.errors import CocaEvalError


def fetch_archive(repo: str, filename: str, unreachable: str) -> Path:
    """The archive ``filename`` of the hub dataset ``repo``; offline or refused, ``unreachable`` plus
    the reason, in one line."""
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(repo, filename, repo_type="dataset"))
    except Exception as exc:  # offline, no access, a moved file: one line with the remedy
        raise CocaEvalError(unreachable.format(reason=type(exc).__name__)) from None


def unpack_member(archive: Path, pattern: str, target: Path) -> bool:
    """Write the first regular file whose name matches ``pattern`` (a shell pattern; a leading ``./``
    ignored) to ``target``, through a partial file so an interrupted copy is never taken for whole.
    False when no member matches."""
    with tarfile.open(archive, "r:*") as tar:
        for member in tar:
            if member.isfile() and fnmatch.fnmatchcase(member.name.removeprefix("./"), pattern):
                source = tar.extractfile(member)
                target.parent.mkdir(parents=True, exist_ok=True)
                partial = target.with_name(target.name + ".part")
                partial.write_bytes(source.read())
                partial.replace(target)
                return True
    return False


def cached_member(
    repo: str, filename: str, pattern: str, target: Path, unreachable: str, missing: str
) -> Path:
    """``target`` when a run already wrote it, else the member of the hub archive matching ``pattern``
    written there: ``unreachable`` (with ``{reason}``) when the archive cannot be fetched, ``missing``
    when it holds no such member, each one line."""
    if target.is_file():
        return target
    if not unpack_member(fetch_archive(repo, filename, unreachable), pattern, target):
        raise CocaEvalError(missing)
    return target
