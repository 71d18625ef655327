"""A user's own zoo model, written as a YAML file: a variant trained from scratch, or a fine-tune.

A from-scratch variant is a ``ZooSpec`` (``{name: my-rope-1e5, label: ..., position: rope,
architecture: {rope_theta: 100000}}``): the shared recipe and shape with one thing changed. A file with
a ``base:`` is a ``FineTuneSpec`` that continues a zoo model (an entry or one of the shipped
fine-tunes), for example another PI factor, context or learning rate for Table 4's pair::

    name: my-rope-pi4-gentle
    label: RoFormer + PI (lr 1e-4)
    description: zoo-rope with PI x4 at 2048 tokens, a fifth of the shipped fine-tune's rate
    base: zoo-rope
    pi_factor: 4
    stages: [{steps: 400}]
    recipe: {context: 2048, batch_size: 2, peak_lr: 1.0e-4, warmup_fraction: 0.05}

Every mistake (a missing file, bad YAML, an unknown field, an unknown base) is one line.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from coca_eval.errors import CocaEvalError
from coca_eval.files import read_utf8
from coca_eval.zoo.finetune import FineTuneSpec
from coca_eval.zoo.recipe import ZooSpec


def load_spec_file(path: Path) -> ZooSpec | FineTuneSpec:
    """The spec a YAML file describes: a fine-tune when it names a ``base``, else a zoo variant."""
    try:
        raw = yaml.safe_load(read_utf8(path, f"zoo spec {path}"))
    except OSError as exc:
        raise CocaEvalError(f"cannot read zoo spec {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise CocaEvalError(f"zoo spec {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise CocaEvalError(f"zoo spec {path}: expected a mapping of fields, got {type(raw).__name__}")
    try:
        spec = FineTuneSpec.model_validate(raw) if "base" in raw else ZooSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "spec"
        raise CocaEvalError(f"zoo spec {path}: {where}: {first['msg']}") from None
    if isinstance(spec, FineTuneSpec):
        _check_base(path, spec)
    return spec


def _check_base(path: Path, spec: FineTuneSpec) -> None:
    """The base must be a zoo model, and the fine-tune reads the books its base was trained on."""
    from coca_eval.zoo.catalog import ZOO
    from coca_eval.zoo.finetune_catalog import FINETUNES, root_entry

    if spec.base not in ZOO and spec.base not in FINETUNES:
        known = ", ".join([*ZOO, *FINETUNES])
        raise CocaEvalError(f"zoo spec {path}: base {spec.base!r} is not a zoo model (known: {known})")
    root = ZOO[root_entry(spec.base)]
    if spec.recipe.extra_books != root.recipe.extra_books:
        raise CocaEvalError(
            f"zoo spec {path}: recipe.extra_books must be {root.recipe.extra_books} like {root.name}'s "
            "(a fine-tune trains on its base's books, with its tokenizer)"
        )
