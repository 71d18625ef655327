"""Hub ids are fingerprinted by their commit, offline from the cache's ``refs/main`` and online from the
hub, so a push to ``main`` between two runs is a different model to resume keys."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hub_cache import COMMIT_A, COMMIT_B, cache_snapshot, point_main_at

from coca_eval.errors import CocaEvalError
from coca_eval.models import hub
from coca_eval.models.hub import hub_cache_dir, hub_fingerprint
from coca_eval.models.presets import model_fingerprint, resolve_model

REPO = "org/name"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "hub"


def test_two_commits_of_one_id_have_different_fingerprints(cache):
    cache_snapshot(cache, REPO, COMMIT_A)
    first = model_fingerprint(REPO)
    cache_snapshot(cache, REPO, COMMIT_B)
    assert first == f"hub:{REPO}@{COMMIT_A}" and model_fingerprint(REPO) == f"hub:{REPO}@{COMMIT_B}"
    point_main_at(cache, REPO, COMMIT_A)
    assert resolve_model(REPO) == (REPO, first)  # loaded by id, keyed by the commit main names


def test_offline_without_the_model_in_the_cache_is_one_line(cache):
    with pytest.raises(CocaEvalError, match="not in the Hugging Face cache .* HF_HUB_OFFLINE") as err:
        hub_fingerprint(REPO)
    assert "\n" not in str(err.value)


def test_a_ref_without_its_snapshot_or_not_a_commit_is_not_cached(cache):
    snapshot = cache_snapshot(cache, REPO, COMMIT_A)
    point_main_at(cache, REPO, COMMIT_B)  # a snapshot that is not there
    with pytest.raises(CocaEvalError, match="not in the Hugging Face cache"):
        hub_fingerprint(REPO)
    point_main_at(cache, REPO, "../../elsewhere")
    with pytest.raises(CocaEvalError, match="not in the Hugging Face cache"):
        hub_fingerprint(REPO)
    assert snapshot.is_dir()


def test_cache_location_follows_hf_home_when_no_cache_is_named(tmp_path, monkeypatch):
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hub_cache_dir() == tmp_path / "home" / "hub"


def _online(monkeypatch, answer):
    """The hub, faked: ``answer`` is the commit it names, or the exception it raises."""
    import huggingface_hub

    def model_info(self, repo_id, **kwargs):
        if isinstance(answer, BaseException):
            raise answer
        return SimpleNamespace(sha=answer)

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", model_info)


def test_online_the_hubs_commit_wins_over_the_cache(cache, monkeypatch):
    cache_snapshot(cache, REPO, COMMIT_A)
    _online(monkeypatch, COMMIT_B)
    assert hub_fingerprint(REPO) == f"hub:{REPO}@{COMMIT_B}"


def test_online_but_unreachable_falls_back_to_the_cache_or_says_so(cache, monkeypatch):
    _online(monkeypatch, ConnectionError("Name or service not known"))
    with pytest.raises(CocaEvalError, match="cannot reach the hub for model org/name: Name or service"):
        hub_fingerprint(REPO)
    cache_snapshot(cache, REPO, COMMIT_A)
    assert hub_fingerprint(REPO) == f"hub:{REPO}@{COMMIT_A}"


def test_online_a_missing_repository_is_an_error_even_if_cached(cache, monkeypatch):
    from huggingface_hub.errors import RepositoryNotFoundError

    cache_snapshot(cache, REPO, COMMIT_A)
    response = SimpleNamespace(headers={}, request=None)
    _online(monkeypatch, RepositoryNotFoundError("404 Client Error\nRepository Not Found", response=response))
    with pytest.raises(CocaEvalError, match=r"^hub model org/name not found: 404 Client Error$"):
        hub.hub_commit(REPO)
