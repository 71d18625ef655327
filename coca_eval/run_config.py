"""What a run records about how it was made (its ``config``): enough to repeat it and to find its samples."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any


def environment(device: str, **extra: Any) -> dict:
    """The software a run was made with, beside the options it was given."""
    import torch
    import transformers

    return {
        "device": device,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        **extra,
    }


def recordable(options: dict[str, Any]) -> dict[str, Any]:
    """The run options worth recording beside the environment (plain values; paths as text)."""
    return {
        key: str(value) if isinstance(value, Path) else value
        for key, value in options.items()
        if value is not None and isinstance(value, (bool, int, float, str, Path))
    }


def run_config(spec, methods, params, journal, weights, runtime, options, backend_notes) -> dict:
    """What a run records about how it was made: enough to repeat it (task, parameters, weights, methods,
    engine) and to know where its samples are (the journal)."""
    from coca_eval.models.presets import trained_context_of

    config = {
        "task": spec.name,
        "task_version": spec.version,
        "params": params.identity(),
        "weights": weights,
        "journal": str(journal.path),
        "methods": [
            {"label": m.label, **m.identity(), "trained_context": trained_context_of(m.model)}
            for m in methods
        ],
        "environment": environment(runtime.device, **recordable(options)),
        **runtime.share.config(),
    }
    if runtime.reuse:
        config["reused_from"] = [str(path) for path in runtime.reuse]
    if any(m.backend != "hf" for m in methods):
        config["engine"] = runtime.engine.describe()
    if any(backend_notes.values()):
        config["backends"] = {label: note for label, note in backend_notes.items() if note}
    return config
