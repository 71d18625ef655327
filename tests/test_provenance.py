"""The commit and dirty flag recorded in every results file, inside and outside a git checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

from coca_eval import provenance
from coca_eval.results import Run


def test_inside_this_checkout_the_revision_is_the_head_commit():
    package = Path(provenance.__file__).parent
    head = subprocess.run(["git", "-C", str(package), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:  # an installed copy outside git: nothing to compare
        assert provenance.git_revision() is None
        return
    assert provenance.git_revision() == head.stdout.strip()
    assert provenance.git_dirty() in (True, False)


def test_without_git_both_are_unknown(monkeypatch):
    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.setattr(subprocess, "run", no_git)
    assert provenance.git_revision() is None and provenance.git_dirty() is None


def test_a_failing_git_is_unknown_too(monkeypatch):
    failed = subprocess.CompletedProcess(["git"], returncode=128, stdout="", stderr="not a git repository")
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: failed)
    assert provenance.git_revision() is None and provenance.git_dirty() is None


def test_code_provenance_gives_a_run_both_fields(monkeypatch):
    monkeypatch.setattr(provenance, "git_revision", lambda: "abc123")
    monkeypatch.setattr(provenance, "git_dirty", lambda: True)
    run = Run(**provenance.code_provenance(), config={"task": "ppl"}, cells=[])
    assert (run.git, run.git_dirty) == ("abc123", True)
