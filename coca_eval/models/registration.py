"""Teach transformers' Auto classes the project's own model types, once, when a model is about to load."""

from __future__ import annotations

import functools


@functools.cache
def register_model_types() -> None:
    """Register every custom model type (idempotent; imports torch and transformers)."""
    from coca_eval.models.coca import register as register_coca

    register_coca()
