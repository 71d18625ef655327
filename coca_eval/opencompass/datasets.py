"""Table 5's datasets and where OpenCompass keeps them: config modules, result names, data files.

The mapping lives in code, not in a preset, because it is knowledge about OpenCompass's layout that
changes with OpenCompass versions (checked against 0.5.4), not a protocol a user would vary. The preset
``tasks/opencompass_table5.yaml`` only lists the datasets.

A suite (MMLU, CMMLU, C-Eval) is one row of the paper but many OpenCompass datasets, one per subject;
``MMLU:anatomy`` selects a single subject (quick checks, tests with small fixtures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from coca_eval.errors import CocaEvalError

CONFIG_PACKAGE = "opencompass.configs.datasets"


@dataclass(frozen=True)
class BenchmarkDataset:
    """One row of Table 5.

    ``abbrs`` are the OpenCompass result names kept (a config may define more, e.g. a ``-test`` split
    without public labels); a suite instead keeps every abbr starting with ``subject_prefix``. ``files``
    are relative to the data root; a suite's ``{subject}`` placeholder is filled per subject.
    """

    name: str
    module: str
    variable: str
    abbrs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    subject_prefix: str | None = None
    subjects: tuple[str, ...] = field(default=())
    all_subjects: int = 0

    @property
    def is_suite(self) -> bool:
        return self.subject_prefix is not None

    def abbr_of(self, subject: str) -> str:
        return f"{self.subject_prefix}{subject}"

    def required_files(self) -> list[str]:
        """Files that must exist below the data root (for a suite: only once subjects are chosen)."""
        if not self.is_suite:
            return list(self.files)
        return [f.format(subject=s) for s in self.subjects for f in self.files]


def _ppl(name: str, config: str, abbr: str, path: str) -> BenchmarkDataset:
    """A one-file row from OpenCompass's ``<config>/<config>_ppl.py``, which defines its datasets as
    ``<dataset>_datasets`` (``SuperGLUE_AX_b`` -> ``AX_b_datasets``) holding ``abbr``."""
    variable = f"{config.split('_', 1)[-1]}_datasets"
    return BenchmarkDataset(name, f"{config}.{config}_ppl", variable, (abbr,), (path,))


TABLE5: tuple[BenchmarkDataset, ...] = (
    _ppl("COPA", "SuperGLUE_COPA", "COPA", "data/SuperGLUE/COPA/val.jsonl"),
    _ppl("AX_b", "SuperGLUE_AX_b", "AX_b", "data/SuperGLUE/AX-b/AX-b.jsonl"),
    _ppl("AX_g", "SuperGLUE_AX_g", "AX_g", "data/SuperGLUE/AX-g/AX-g.jsonl"),
    _ppl("RTE", "SuperGLUE_RTE", "RTE", "data/SuperGLUE/RTE/val.jsonl"),
    _ppl("OCNLI", "CLUE_ocnli", "ocnli", "data/CLUE/OCNLI/dev.json"),
    _ppl("CMNLI", "CLUE_cmnli", "cmnli", "data/CLUE/cmnli/cmnli_public/dev.json"),
    _ppl("C3", "CLUE_C3", "C3", "data/CLUE/C3/dev_0.json"),
    _ppl("CSL", "FewCLUE_csl", "csl_dev", "data/FewCLUE/csl/dev_few_all.json"),
    _ppl("EPRSTMT", "FewCLUE_eprstmt", "eprstmt-dev", "data/FewCLUE/eprstmt/dev_few_all.json"),
    _ppl("BoolQ", "SuperGLUE_BoolQ", "BoolQ", "data/SuperGLUE/BoolQ/val.jsonl"),
    _ppl("WiC", "SuperGLUE_WiC", "WiC", "data/SuperGLUE/WiC/val.jsonl"),
    _ppl("WSC", "SuperGLUE_WSC", "WSC", "data/SuperGLUE/WSC/val.jsonl"),
    _ppl("CHID", "FewCLUE_chid", "chid-dev", "data/FewCLUE/chid/dev_few_all.json"),
    _ppl("AFQMC", "CLUE_afqmc", "afqmc-dev", "data/CLUE/AFQMC/dev.json"),
    BenchmarkDataset(
        "MMLU",
        "mmlu.mmlu_ppl",
        "mmlu_datasets",
        files=("data/mmlu/dev/{subject}_dev.csv", "data/mmlu/test/{subject}_test.csv"),
        subject_prefix="lukaemon_mmlu_",
        all_subjects=57,
    ),
    BenchmarkDataset(
        "CMMLU",
        "cmmlu.cmmlu_ppl",
        "cmmlu_datasets",
        files=("data/cmmlu/dev/{subject}.csv", "data/cmmlu/test/{subject}.csv"),
        subject_prefix="cmmlu-",
        all_subjects=67,
    ),
    BenchmarkDataset(
        "C-Eval",
        "ceval.ceval_ppl",
        "ceval_datasets",
        files=(
            "data/ceval/formal_ceval/dev/{subject}_dev.csv",
            "data/ceval/formal_ceval/val/{subject}_val.csv",
        ),
        subject_prefix="ceval-",
        all_subjects=52,
    ),
)
BY_NAME = {d.name.lower(): d for d in TABLE5}
ALIASES = {"ceval": "c-eval", "ax-b": "ax_b", "ax-g": "ax_g"}


def lookup(name: str) -> BenchmarkDataset:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in BY_NAME:
        known = ", ".join(d.name for d in TABLE5)
        raise CocaEvalError(f"unknown OpenCompass dataset {name!r} (known: {known}; or 'table5')")
    return BY_NAME[key]


def parse_datasets(spec: str | Sequence[str], preset: Sequence[str] = ()) -> list[BenchmarkDataset]:
    """``table5`` (the preset's list), or ``COPA,RTE,MMLU:anatomy,MMLU:virology`` in that order.

    Subjects given for a suite accumulate on one entry; a suite without subjects has none yet (the
    subjects are read from the data root, see :func:`with_subjects_from`).
    """
    names = [spec] if isinstance(spec, str) else list(spec)
    items = [part.strip() for item in names for part in item.split(",") if part.strip()]
    if not items:
        raise CocaEvalError("--datasets is empty: give table5 or a comma-separated list of names")
    chosen: dict[str, BenchmarkDataset] = {}
    for item in items:
        if item.lower() == "table5":
            for name in preset:
                chosen.setdefault(lookup(name).name, lookup(name))
            continue
        name, _, subject = item.partition(":")
        dataset = chosen.get(lookup(name).name, lookup(name))
        if subject and not dataset.is_suite:
            raise CocaEvalError(f"{dataset.name} has no subjects (only MMLU, CMMLU and C-Eval do)")
        if subject and subject not in dataset.subjects:
            dataset = with_subjects(dataset, (*dataset.subjects, subject))
        chosen[dataset.name] = dataset
    return list(chosen.values())


def with_subjects(dataset: BenchmarkDataset, subjects: Sequence[str]) -> BenchmarkDataset:
    return replace(dataset, subjects=tuple(subjects))
