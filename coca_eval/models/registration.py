"""Teach transformers' Auto classes the project's own model types, once, when a model is about to load."""

from __future__ import annotations

import functools
import importlib

# each module has a ``register()`` that adds its config and model classes to the Auto classes
MODEL_TYPE_MODULES = ("coca_eval.models.coca", "coca_eval.models.prope", "coca_eval.models.alibi")


@functools.cache
def register_model_types() -> None:
    """Register every custom model type (idempotent; imports torch and transformers)."""
    for module in MODEL_TYPE_MODULES:
        importlib.import_module(module).register()
