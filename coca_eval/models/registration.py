"""Custom transformers model types, registered with the Auto classes only when something loads a model.

``import coca_eval`` must stay free of torch and transformers (``coca-eval --help``, ``report`` and
``gate`` never run a model), so nothing registers at its import. ``import coca_eval.models`` (the
documented way for users) registers every type through :func:`register_when_transformers_loads`: at
once when transformers is already imported, else when it is. Every place that hands a directory to
transformers' Auto classes (the hf backend, the local tokenizer/config side of vllm and openai,
``convert``, the vLLM plug-in, OpenCompass's model wrapper) calls :func:`register_model_types` first.

A new model type adds one line to :data:`MODEL_TYPE_REGISTRATIONS`: a lazy ``"module:function"``
whose function registers its config and model classes (idempotently).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import warnings

from coca_eval.registry import resolve

MODEL_TYPE_REGISTRATIONS: list[str] = [
    "coca_eval.models.coca:register",  # coca_llama, coca_gpt_neox
    "coca_eval.models.prope:register",  # prope_llama (p-RoPE; p = 0 is NoPE)
    "coca_eval.models.alibi:register",  # alibi_llama
]
_done: set[str] = set()


def register_model_types(skip_importing: bool = False) -> None:
    """Run every registration once per process (cheap to call before each load).

    ``skip_importing``: leave out a type whose module is itself still being imported (it imported
    transformers, which triggered this call); the next call, before any load, registers it."""
    for target in MODEL_TYPE_REGISTRATIONS:
        if target in _done or (skip_importing and _still_importing(target.split(":")[0])):
            continue
        resolve(target)()
        _done.add(target)


def _still_importing(module_name: str) -> bool:
    """Whether ``module_name`` or a package above it is in the middle of its own import."""
    parts = module_name.split(".")
    for end in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:end]))
        if module is not None and getattr(getattr(module, "__spec__", None), "_initializing", False):
            return True
    return False


class _RegisterAfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``transformers`` with the other finders and, once it has run, registers the model types.

    ``import coca_eval.models`` must not import transformers itself: ``coca-eval --help`` and ``models``
    import this package (presets, rope patches) and stay free of torch. So the import only promises the
    registration; it happens when the program imports transformers, before it can ask an Auto class.
    """

    def __init__(self) -> None:
        self._loader: importlib.abc.Loader | None = None

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "transformers" or self._loader is not None:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        self._loader, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__spec__.loader = module.__loader__ = self._loader
        self._loader.exec_module(module)
        try:
            register_model_types(skip_importing=True)
        except Exception as exc:  # a broken install must not break `import transformers` itself
            warnings.warn(f"coca-eval could not register its model types: {exc}", stacklevel=2)


def register_when_transformers_loads() -> None:
    """Register every model type now if transformers is imported, else the moment it is."""
    if "transformers" in sys.modules:
        register_model_types()
    elif not any(isinstance(finder, _RegisterAfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport())
