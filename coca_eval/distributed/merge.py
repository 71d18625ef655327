"""``coca-eval merge``: the results files of one run's ``--shard K/N`` jobs into the run an unsplit
invocation writes.

Each check is a one-line refusal: every file is a shard of the same run (task, task version,
parameters, weights, methods and N agree); no unit comes twice with different parts; every unit of
every cell is present (a missing shard is named with its units); the shards read the same data (ppl's
per-document token hashes name the documents that differ, then ``config.data``, the dataset's content
fingerprint, must agree); a forged part (a negative count, a NaN sum, a string) forms no cell. Each
cell is then formed from the union of its parts by the task's ``combine`` hook, the function an
unsplit run calls itself, so the merged cells equal that run's. A cell that ran out of memory (or
failed) in a shard stays so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coca_eval.distributed.partition import Partition
from coca_eval.distributed.slots import check_complete, collect, form_cell
from coca_eval.errors import CocaEvalError
from coca_eval.results import Run
from coca_eval.taskspec import load_checked_run, spec_for

IDENTITY = ("task", "task_version", "params", "weights", "methods")  # what makes two files one run
# What one process records about itself: its place in the split, its journal, its software and engine,
# the documents it read (checked through their hashes and ``data``). Every other entry of a shard's
# config is a setting of the run (RULER's ``--threshold``): the shards must agree on it, and it is kept.
PER_PROCESS = ("shard", "journal", "environment", "engine", "backends", "documents", "data", "reused_from")


@dataclass(frozen=True)
class ShardFile:
    path: Path
    run: Run
    partition: Partition


def load_shard(path: Path) -> ShardFile:
    run = load_checked_run(path)
    shard = run.config.get("shard")
    if not isinstance(shard, dict):
        raise CocaEvalError(f"{path} is not a shard's results file (no config.shard); merge takes the "
                            "outputs of --shard K/N runs")  # fmt: skip
    try:
        partition = Partition(int(shard["index"]) - 1, int(shard["count"]))
    except (KeyError, TypeError, ValueError):
        raise CocaEvalError(f"{path}: config.shard is not {{index: K, count: N}} with 1 <= K <= N") from None
    return ShardFile(Path(path), run, partition)


def differences(a: dict, b: dict, keys: Sequence[str] = IDENTITY) -> list[str]:
    """The identity fields in which two shard configs (or two ranks' run identities) differ
    (parameters by name)."""
    named = []
    for key in keys:
        ours, theirs = a.get(key), b.get(key)
        if ours == theirs:
            continue
        if key == "params" and isinstance(ours, dict) and isinstance(theirs, dict):
            keys = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
            named.append(f"params ({', '.join(keys)})")
        else:
            named.append(key)
    return named


def check_one_run(shards: Sequence[ShardFile]) -> None:
    first = shards[0]
    for other in shards[1:]:
        named = differences(first.run.config, other.run.config)
        named += differing_settings(first.run.config, other.run.config)
        if other.partition.count != first.partition.count:
            named.append(f"shard count ({first.partition.count} vs {other.partition.count})")
        if named:
            raise CocaEvalError(f"{first.path} and {other.path} are not shards of one run: "
                                f"{', '.join(named)} differ")  # fmt: skip


def differing_settings(a: dict, b: dict) -> list[str]:
    """The run settings outside the identity (see ``PER_PROCESS``) in which two shard configs differ."""
    keys = sorted((set(a) | set(b)) - set(IDENTITY) - set(PER_PROCESS))
    return [key for key in keys if a.get(key) != b.get(key)]


def merged_config(shards: Sequence[ShardFile]) -> dict:
    """The first shard's config without its shard; dict entries (documents, backends, environment)
    are the union over shards; ``merged_from`` lists the files and their journals."""
    config = {k: v for k, v in shards[0].run.config.items() if k not in ("shard", "journal")}
    for shard in shards[1:]:
        for key, value in shard.run.config.items():
            if isinstance(value, dict) and isinstance(config.get(key), dict):
                config[key] = {**value, **config[key]}
    config["merged_from"] = [
        {"file": str(s.path), "shard": s.partition.label, "journal": s.run.config.get("journal")}
        for s in shards
    ]
    return config


def merge_shard_files(paths: Sequence[Path]) -> Run:
    """The merged run (see the module doc); every refusal is one :class:`CocaEvalError` line."""
    shards = [load_shard(Path(p)) for p in paths]
    check_one_run(shards)
    slots = collect((shard.path, shard.run) for shard in shards)
    check_complete(slots, shards[0].partition.count)
    cells = [form_cell(slot) for slot in slots]
    check_same_data(shards)
    dirty = [s.run.git_dirty for s in shards if s.run.git_dirty is not None]
    run = Run(
        git=shards[0].run.git,
        git_dirty=any(dirty) if dirty else None,
        config=merged_config(shards),
        cells=cells,
    )
    spec = spec_for(run.config["task"])
    if spec.merged is not None:
        spec.merged(run)
    return run


def check_same_data(shards: Sequence[ShardFile]) -> None:
    """The dataset fingerprints the shards recorded (``config.data``: content, not path or mtime)
    agree. Checked after the cells, whose document hashes name the documents that differ; files of
    older versions record none and are not compared."""
    recorded = [(s.path, s.run.config.get("data")) for s in shards if s.run.config.get("data") is not None]
    for path, data in recorded[1:]:
        if data != recorded[0][1]:
            raise CocaEvalError(
                f"{recorded[0][0]} and {path} read different data ({recorded[0][1]} vs {data}): "
                "the shards must read one version of the dataset"
            )
