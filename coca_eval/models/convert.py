"""Turn CoCA checkpoints of the reference code, or plain LLaMA checkpoints, into coca-eval CoCA checkpoints.

The reference repository (codefuse-ai/Collinear-Constrained-Attention) saved its models under the stock
model types ``llama`` and ``gpt_neox``, so transformers would load them as ordinary LLaMA / GPT-NeoX
and silently compute the wrong attention. Its weight layout is already ours (``self_attn.t_proj`` for
LLaMA, a fused ``query_key_value`` whose middle third per head is t for GPT-NeoX), so converting means
rewriting the config to ``coca_llama`` / ``coca_gpt_neox`` and dropping stale rotary buffers.

Both functions write a directory that ``AutoModelForCausalLM.from_pretrained`` loads once
:func:`~coca_eval.models.registration.register_model_types` has run (every loader in coca-eval runs
it), with the source's tokenizer files copied alongside.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.files import copy_side_file, read_utf8
from coca_eval.models.coca.configuration_coca import COCA_VARIANTS

_WEIGHT_FILE = re.compile(r"\.(safetensors|bin|pt|pth|ckpt|msgpack|h5)$|\.index\.json$")
# buffers older transformers versions (and the reference NeoX code) saved; they are recomputed at load
_STALE_KEYS = re.compile(r"(rotary_emb\.inv_freq|attention\.bias|attention\.masked_bias)$")
_NOT_CONFIG = ("model_type", "architectures", "transformers_version", "auto_map", "coca_variant")
# torch.load(weights_only=True) could still run code from a crafted pickle before torch 2.6 (CVE-2025-32434)
SAFE_PICKLE_TORCH = (2, 6)


def _read_config(src: Path) -> dict[str, Any]:
    """The source's config.json, or a one-line error naming what is missing."""
    path = src / "config.json"
    if not path.is_file():
        raise CocaEvalError(f"{src} is not a checkpoint directory (no config.json)")
    try:
        config = json.loads(read_utf8(path, str(path)))
    except json.JSONDecodeError as exc:
        raise CocaEvalError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(config, dict):
        raise CocaEvalError(f"{path} holds a JSON {type(config).__name__}, not an object of config fields")
    return config


def torch_version() -> tuple[int, int]:
    """(major, minor) of the installed torch (a local build's ``2.7.0a0+git...`` reads as (2, 7))."""
    import torch

    match = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(match[1]), int(match[2])) if match else (0, 0)


def pickle_loading_is_safe() -> bool:
    """Whether this torch's ``weights_only`` loading can be trusted with a checkpoint from elsewhere."""
    return torch_version() >= SAFE_PICKLE_TORCH


def _refuse_unsafe_pickles(src: Path) -> None:
    """Pickle weights (``*.bin`` with no safetensors beside them, so both our key listing and
    transformers read the pickles) are refused by an older torch: a checkpoint converted is usually
    one downloaded, and before 2.6 ``weights_only`` did not stop a crafted file running code."""
    if any(src.glob("*.safetensors")) or not any(src.glob("*.bin")) or pickle_loading_is_safe():
        return
    major, minor = torch_version()
    floor = ".".join(map(str, SAFE_PICKLE_TORCH))
    raise CocaEvalError(
        f"{src} holds pickle (.bin) weights, which torch {major}.{minor} cannot load safely; "
        f"upgrade to torch >= {floor} or convert the weights to safetensors first"
    )


def _weight_names(src: Path) -> set[str]:
    """Parameter names stored in the checkpoint, read without loading the tensors into memory."""
    import torch
    from safetensors import safe_open

    def read(path: Path) -> set[str]:
        try:
            if path.suffix == ".safetensors":
                with safe_open(str(path), framework="pt") as handle:
                    return set(handle.keys())
            return set(torch.load(path, map_location="cpu", mmap=True, weights_only=True))
        except Exception as exc:  # any failure to parse a user's file is bad input, not a bug
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise CocaEvalError(f"cannot read weights file {path}: {reason}") from None

    files = sorted(src.glob("*.safetensors")) or sorted(src.glob("*.bin"))
    names = set().union(*(read(path) for path in files))
    if not names:
        raise CocaEvalError(f"{src} holds no *.safetensors or *.bin weights")
    return names


def _check_variant(variant: str) -> None:
    if variant not in COCA_VARIANTS:
        raise CocaEvalError(f"unknown CoCA variant {variant!r}: expected one of {', '.join(COCA_VARIANTS)}")


def _prepare_dirs(src_dir: str | Path, out_dir: str | Path) -> tuple[Path, Path]:
    """Resolve both paths; writing into the source would clobber the weights being read."""
    src, out = Path(src_dir).expanduser(), Path(out_dir).expanduser()
    if not src.is_dir():
        raise CocaEvalError(f"checkpoint directory {src} does not exist")
    if out.exists() and out.resolve() == src.resolve():
        raise CocaEvalError(f"output directory {out} is the source directory; choose another")
    return src, out


def _coca_config(source: dict[str, Any], variant: str) -> Any:
    """Our config class for the source's model type, keeping every architecture field it states."""
    from coca_eval.models.coca import CocaLlamaConfig, CocaNeoXConfig

    config_class = {"llama": CocaLlamaConfig, "gpt_neox": CocaNeoXConfig}[source["model_type"]]
    fields = {k: v for k, v in source.items() if k not in _NOT_CONFIG}
    try:
        return config_class.from_dict({**fields, "coca_variant": variant})
    except (TypeError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[-1].strip()
        raise CocaEvalError(f"cannot build a CoCA config from this checkpoint: {reason}") from None


def _load_and_save(src: Path, out: Path, config: Any, key_mapping: dict[str, str] | None = None) -> Path:
    """Load the source weights into the CoCA model, insist every weight matched, save with tokenizer."""
    from transformers import AutoModelForCausalLM

    from coca_eval.models.registration import register_model_types

    register_model_types()
    try:
        model, info = AutoModelForCausalLM.from_pretrained(
            src,
            config=config,
            dtype="auto",
            key_mapping=key_mapping,
            output_loading_info=True,
            trust_remote_code=False,
        )
    except (OSError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CocaEvalError(f"cannot load the weights in {src}: {reason}") from None
    unexpected = [k for k in info["unexpected_keys"] if not _STALE_KEYS.search(k)]
    problems = list(info["missing_keys"]) + unexpected + [str(m[0]) for m in info["mismatched_keys"]]
    if problems:
        shown = ", ".join(sorted(problems)[:3])
        layout = config.model_type
        raise CocaEvalError(f"{src} does not match the {layout} layout ({len(problems)} keys: {shown})")
    out.mkdir(parents=True, exist_ok=True)
    for path in src.iterdir():  # tokenizer and generation files; config and weights are written below
        if path.name != "config.json" and not _WEIGHT_FILE.search(path.name) and not path.is_dir():
            copy_side_file(path, src, out)
    model.config.architectures = [type(model).__name__]
    model.save_pretrained(out, save_original_format=False)  # our key names, not the source's k_proj
    return out


def convert_reference(src_dir: str | Path, out_dir: str | Path, variant: str = "slack") -> Path:
    """Convert a checkpoint saved by the CoCA reference code into a loadable ``coca_*`` checkpoint.

    LLaMA-CoCA is recognised by ``self_attn.t_proj`` weights under ``model_type: llama``; NeoX-CoCA
    (``gpt_neox``) has the stock fused layout, so any GPT-NeoX checkpoint is taken to be CoCA-trained.
    ``variant`` is recorded in the new config; the reference models were trained as ``"slack"``.
    Returns ``out_dir``.
    """
    _check_variant(variant)
    src, out = _prepare_dirs(src_dir, out_dir)
    source = _read_config(src)
    _refuse_unsafe_pickles(src)
    model_type = source.get("model_type")
    if model_type not in ("llama", "gpt_neox"):
        raise CocaEvalError(f"{src}: reference CoCA checkpoints are llama or gpt_neox, got {model_type!r}")
    if model_type == "llama" and not any(k.endswith("self_attn.t_proj.weight") for k in _weight_names(src)):
        raise CocaEvalError(
            f"{src} is plain LLaMA (no self_attn.t_proj weights): start CoCA from it with `coca-eval convert "
            "--from-llama`"
        )
    return _load_and_save(src, out, _coca_config(source, variant))


def convert_from_llama(src_dir: str | Path, out_dir: str | Path, variant: str = "slack") -> Path:
    """Build a LLaMA-CoCA checkpoint from a plain LLaMA one, t_proj initialised from k_proj.

    This is the paper's starting point for fine-tuning an existing model into CoCA (§4): every other
    weight is kept, and t starts as the old key projection (the model needs fine-tuning afterwards,
    since relu-averaged keys are not the keys it was trained with). Returns ``out_dir``.
    """
    _check_variant(variant)
    src, out = _prepare_dirs(src_dir, out_dir)
    source = _read_config(src)
    _refuse_unsafe_pickles(src)
    if (model_type := source.get("model_type")) != "llama":
        raise CocaEvalError(f"{src}: expected a LLaMA checkpoint (model_type llama), got {model_type!r}")
    if not any(k.endswith("self_attn.k_proj.weight") for k in _weight_names(src)):
        raise CocaEvalError(f"{src} has no self_attn.k_proj weights (already CoCA? use convert_reference)")
    mapping = {r"self_attn\.k_proj\.": "self_attn.t_proj."}
    return _load_and_save(src, out, _coca_config(source, variant), key_mapping=mapping)
