"""The commit a hub model id stands for, so that a resume key names weights, not a moving name.

``org/name`` loads whatever the repository's ``main`` points at when the model is loaded; a push
between two runs changes every number while the id stays the same. The fingerprint therefore carries
the commit: offline (``HF_HUB_OFFLINE``) the one the local cache's ``refs/main`` names, which is what
transformers itself loads offline; online the hub's answer, or the cache's when the hub cannot be
reached (transformers then falls back to the cache as well).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from coca_eval.errors import CocaEvalError

_COMMIT = re.compile(r"[0-9a-f]{40}")
_TRUE = {"1", "ON", "YES", "TRUE"}


def hub_fingerprint(repo_id: str) -> str:
    """``hub:org/name@COMMIT``; a one-line error when no commit can be found."""
    return f"hub:{repo_id}@{hub_commit(repo_id)}"


def hub_commit(repo_id: str) -> str:
    cached = cached_commit(repo_id)
    if hub_offline():
        if cached is None:
            raise CocaEvalError(
                f"hub model {repo_id} is not in the Hugging Face cache ({hub_cache_dir()}) and "
                "HF_HUB_OFFLINE is set; download it once online or give a local directory"
            )
        return cached
    return remote_commit(repo_id, cached)


def hub_offline() -> bool:
    """Read at each call (huggingface_hub reads it once, at import)."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in _TRUE


def hub_cache_dir() -> Path:
    """Where huggingface_hub keeps models, by the same variables it reads, read now."""
    explicit = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        return Path(os.path.expandvars(explicit)).expanduser()
    home = os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")) / "huggingface"
    return Path(os.path.expandvars(str(home))).expanduser() / "hub"


def cached_commit(repo_id: str) -> str | None:
    """The commit ``refs/main`` names in the cache, if that commit's snapshot is there too."""
    repo = hub_cache_dir() / f"models--{repo_id.replace('/', '--')}"
    try:
        commit = (repo / "refs" / "main").read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not _COMMIT.fullmatch(commit) or not (repo / "snapshots" / commit).is_dir():
        return None
    return commit


def remote_commit(repo_id: str, cached: str | None) -> str:
    """The hub's current ``main`` commit; ``cached`` when the hub cannot be reached."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    try:
        commit = HfApi().model_info(repo_id, timeout=20).sha
    except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
        raise CocaEvalError(f"hub model {repo_id} not found: {_first_line(exc)}") from None
    except Exception as exc:  # unreachable hub: its HTTP client's error types vary between releases
        if cached is not None:
            return cached
        raise CocaEvalError(f"cannot reach the hub for model {repo_id}: {_first_line(exc)}") from None
    if not commit:
        raise CocaEvalError(f"the hub named no commit for model {repo_id}")
    return commit


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__
