"""The one document type every source produces."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Document:
    """A text with a stable id and a record of where it came from (kept in run metadata)."""

    doc_id: str
    text: str
    title: str = ""
    source: dict = field(default_factory=dict)
