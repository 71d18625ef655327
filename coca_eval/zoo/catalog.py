"""The zoo's entries: one per seed system, identical except for position handling.

Rows follow the CoCA paper's from-scratch half of Table 1 (ALiBi, RoFormer, + CoCA; the "+ dynamic
NTK" rows are the same weights evaluated with ``--rope dynamic:4``), its Table 3 (CoCA-Strict vs
CoCA-Slack), and the p-RoPE paper's Table 2 (RoPE, p-RoPE with p = 0.75, NoPE). Their trained
weights, where they ship, are under ``checkpoints/`` (:func:`shipped_dir`).
"""

from __future__ import annotations

from pathlib import Path

from coca_eval.zoo.names import catalog, look_up
from coca_eval.zoo.recipe import ZooSpec

ZOO: dict[str, ZooSpec] = catalog(
    ZooSpec(
        name="zoo-rope",
        label="RoFormer",
        description="rotary position embedding on every query/key pair (RoFormer)",
        position="rope",
    ),
    ZooSpec(
        name="zoo-coca-slack",
        label="RoFormer + CoCA",
        description="Collinear Constrained Attention, slack form (the CoCA paper's default)",
        position="coca",
        coca_variant="slack",
    ),
    ZooSpec(
        name="zoo-coca-strict",
        label="RoFormer + CoCA-Strict",
        description="Collinear Constrained Attention, strict form (query halves tied, eq. 12)",
        position="coca",
        coca_variant="strict",
    ),
    ZooSpec(
        name="zoo-alibi",
        label="ALiBi",
        description="no rotation; linear attention biases with the ALiBi paper's per-head slopes",
        position="alibi",
    ),
    ZooSpec(
        name="zoo-nope",
        label="NoPE",
        description="no position information at all (p-RoPE with p = 0); causality alone",
        position="prope",
        rope_fraction=0.0,
    ),
    ZooSpec(
        name="zoo-prope-0.75",
        label="p-RoPE (p=0.75)",
        description="RoPE on the highest 75 % of frequencies; the lowest 25 % left unrotated",
        position="prope",
        rope_fraction=0.75,
    ),
)

TRAIN_ORDER = tuple(ZOO)
# The trained checkpoints ship inside the package, so a wheel install has them too.
CHECKPOINTS = Path(__file__).parent / "checkpoints"


def zoo_spec(name: str) -> ZooSpec:
    return look_up(ZOO, name, "zoo model")


def shipped_dir(name: str) -> Path | None:
    """The shipped ``from_pretrained`` directory of a zoo model, or None when it was not trained yet."""
    path = CHECKPOINTS / name
    return path if (path / "config.json").is_file() else None
