"""lm-evaluation-harness's output files (``--output_path`` with ``--log_samples``), read and validated:
the ``results_<time>.json`` (aggregates, task configs, the model and its settings) and one
``samples_<task>_<time>.jsonl`` per task; and the registry of importers that turn such a folder into a
run (``lm-eval``: :func:`coca_eval.imported.evaluation_harness.import_harness_dir`), which a replay of
its prompts (``ruler --replay``) reaches by name, below the import layer that fills it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from coca_eval.errors import CocaEvalError
from coca_eval.files import read_user_text
from coca_eval.registry import Registry
from coca_eval.results import unique_units

# "lm-eval" -> import_harness_dir(folder, method=None, tasks=None) -> Run
IMPORTERS = Registry("harness importer", builtins=("coca_eval.imported.spec",))

# lm-eval's RULER task names -> ours (the NIAH names are the same)
RULER_NAMES = {
    **{name: name for name in (
        "niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
        "niah_multikey_3", "niah_multivalue", "niah_multiquery",
    )},
    "ruler_vt": "vt", "ruler_cwe": "cwe", "ruler_fwe": "fwe",
    "ruler_qa_squad": "qa_1", "ruler_qa_hotpot": "qa_2",
}  # fmt: skip
KNOWN_VERSIONS = ("0.4.",)  # lm-eval releases whose output layout this reads
HAYSTACK = "lm-eval's"  # the haystack an imported RULER cell (and a replay of its prompts) records


class HarnessSample(BaseModel):
    """One line of a ``samples_<task>_<time>.jsonl``: the fields the import reads."""

    model_config = ConfigDict(extra="allow")

    doc_id: int
    doc: dict[str, Any]
    filtered_resps: list[Any]
    arguments: dict[str, Any]
    doc_hash: str
    prompt_hash: str


class HarnessResults(BaseModel):
    """A ``results_<time>.json``: the fields the import reads."""

    model_config = ConfigDict(extra="allow")

    results: dict[str, dict[str, Any]]
    configs: dict[str, dict[str, Any]]
    config: dict[str, Any]
    lm_eval_version: str
    model_name: str = ""
    chat_template_sha: str | None = None

    @field_validator("lm_eval_version")
    @classmethod
    def _known_layout(cls, version: str) -> str:
        """The layout read here is lm-eval 0.4's (its results and samples files); another may differ."""
        if not version.startswith(KNOWN_VERSIONS):
            raise ValueError(f"lm-eval {version}'s files are not read (known: {', '.join(KNOWN_VERSIONS)}x)")
        return version


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc']) or 'the file'}: {error['msg']}"


def read_results(folder: Path) -> tuple[Path, HarnessResults]:
    """The newest ``results_*.json`` under ``folder`` (lm-eval nests it in a folder per model)."""
    found = sorted(Path(folder).rglob("results_*.json"), key=lambda p: p.name)
    if not found:
        raise CocaEvalError(f"{folder} holds no lm-eval results_*.json (run lm-eval with --output_path)")
    path = found[-1]
    try:
        return path, HarnessResults.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CocaEvalError(f"cannot read {path} ({type(exc).__name__})") from None
    except ValidationError as exc:
        raise CocaEvalError(f"{path}: {_first_error(exc)}") from None


def samples_file(results_path: Path, task: str) -> Path:
    """Where lm-eval writes the task's samples: beside ``results_path``, with the same timestamp."""
    stamp = results_path.name.removeprefix("results_").removesuffix(".json")
    return results_path.with_name(f"samples_{task}_{stamp}.jsonl")


def read_samples(results_path: Path, task: str) -> list[HarnessSample]:
    """The task's samples file written beside ``results_path`` (same timestamp). An empty file is
    refused (the task would vanish from the import while its aggregates stand in the results file), and
    so is a doc_id met twice under one filter (lm-eval writes a document once per filter): it would
    count twice."""
    path = samples_file(results_path, task)
    if not path.is_file():
        raise CocaEvalError(
            f"{results_path.parent} has no {path.name}: run lm-eval with --log_samples (per-sample scores "
            "are read from it, never from the aggregate)"
        )
    samples = []
    for number, line in enumerate(read_user_text(path).splitlines(), 1):
        if line.strip():
            try:
                samples.append(HarnessSample.model_validate(json.loads(line)))
            except json.JSONDecodeError as exc:
                raise CocaEvalError(f"{path} line {number}: {exc.msg}") from None
            except ValidationError as exc:
                raise CocaEvalError(f"{path} line {number}: {_first_error(exc)}") from None
    if not samples:  # the task's aggregates are in the results file: dropping it would lose them unseen
        raise CocaEvalError(
            f"{path} holds no samples (the task's aggregates have none to be checked against)"
        )
    unique_units(map(_doc_key, samples), str(path), "doc")
    return samples


def _doc_key(sample: HarnessSample) -> int | str:
    """A sample's identity in its file: its doc_id, with its filter where that is not ``none``."""
    filtered = (sample.model_extra or {}).get("filter", "none")
    return sample.doc_id if filtered == "none" else f"{sample.doc_id} ({filtered})"
