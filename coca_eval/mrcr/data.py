"""OpenAI's published MRCR conversations (``--source openai``): ``openai/mrcr`` from the hub (``--data
hub``) or a local folder in its layout (``--data DIR``): ``2needle/``, ``4needle/``, ``8needle/`` each
holding ``*.parquet`` shards (``2needle.parquet`` beside them, the first release's layout, and
``*.jsonl`` files are read too). A row holds ``prompt`` (the conversation, a JSON list of ``{role,
content}`` messages ending with the user's request), ``answer`` (``random_string_to_prepend`` followed
by the wanted turn's text), ``random_string_to_prepend``, ``n_needles``, ``desired_msg_index`` (the
wanted assistant turn's place in the conversation), ``total_messages`` and ``n_chars``.

Every row is checked when read, before any model loads: a missing column, a prompt that is not a JSON
list of messages, a ``desired_msg_index`` past the conversation, an answer with nothing after the
random string, or a conversation held twice stops the run with one line naming the file, the row and
the field.

OpenAI bins its rows by tokens as its dataset card counts them: the ``o200k_base`` tokens of every
message's content, summed (no template), in bins ``(4096, 8192]`` .. ``(524288, 1048576]`` named by
their upper end. That count needs ``tiktoken`` and its ``o200k_base`` file (downloaded once, or from
``TIKTOKEN_CACHE_DIR``); without them the rows are still run, binned by the model's own tokens, and
the published bins are left out, with the reason in the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from coca_eval.data.published_rows import file_rows, from_the_hub, refuse_repeats, require_columns
from coca_eval.errors import CocaEvalError

HUB, HUB_ID = "hub", "openai/mrcr"
COLUMNS = (
    "prompt",
    "answer",
    "random_string_to_prepend",
    "n_needles",
    "desired_msg_index",
    "total_messages",
    "n_chars",
)
NEEDLES = (2, 4, 8)
ROLES = ("system", "user", "assistant")
OPENAI_BINS = tuple(2**k for k in range(13, 21))  # upper ends: (4096, 8192] .. (524288, 1048576]


@dataclass(frozen=True)
class ConversationRow:
    messages: tuple[dict, ...]
    answer: str
    prefix: str
    needles: int
    desired: int
    total_messages: int
    n_chars: int
    where: str  # "FILE row I", as messages name it

    @property
    def key(self) -> str:
        return json.dumps(self.messages)

    @property
    def wanted_message(self) -> int:
        return self.desired

    def detail(self) -> dict:
        """What a sample of this row records of it: where it is, its random string and wanted turn,
        OpenAI's count and bin of it (or why they cannot be had), its chance floor."""
        from coca_eval.mrcr.scoring import chance_floor

        tokens, why = openai_tokens(self.messages)
        return {
            "row": self.where,
            "prefix": self.prefix,
            "desired_msg_index": self.desired,
            "n_chars": self.n_chars,
            "openai_tokens": tokens,
            "openai_bin": openai_bin(tokens),
            **({"openai_bins": why} if why else {}),
            "chance": chance_floor(self.answer, self.prefix, self.needle_answers()),
        }

    def needle_answers(self) -> list[str]:
        """The answers of the requests identical to the wanted one (the wanted answer among them)."""
        ask = self.messages[self.desired - 1]["content"] if self.desired > 0 else None
        return [
            self.messages[i + 1]["content"]
            for i, m in enumerate(self.messages[:-1])
            if m["role"] == "user" and m["content"] == ask and self.messages[i + 1]["role"] == "assistant"
        ]


def _integer(raw: dict, name: str, where: str) -> int:
    value = raw[name]
    if hasattr(value, "item"):  # a numpy scalar from a parquet reader
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int):
        raise CocaEvalError(f"{where}: {name}: not an integer")
    return value


def _messages(prompt: Any, where: str) -> tuple[dict, ...]:
    if not isinstance(prompt, str):
        raise CocaEvalError(f"{where}: prompt: not text (a JSON list of messages)")
    try:
        messages = json.loads(prompt)
    except json.JSONDecodeError as exc:
        raise CocaEvalError(f"{where}: prompt: not JSON ({exc.msg})") from None
    if not isinstance(messages, list) or not messages:
        raise CocaEvalError(f"{where}: prompt: not a non-empty JSON list of messages")
    for number, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise CocaEvalError(f"{where}: prompt: message {number} has no role of {', '.join(ROLES)}")
        if not isinstance(message.get("content"), str):
            raise CocaEvalError(f"{where}: prompt: message {number} has no text content")
    if messages[-1]["role"] != "user":
        raise CocaEvalError(f"{where}: prompt: the conversation does not end with the user's request")
    return tuple({"role": m["role"], "content": m["content"]} for m in messages)


def check_row(raw: Any, where: str) -> ConversationRow:
    """A row as read, or one line naming the row and the field that is wrong."""
    require_columns(raw, COLUMNS, where)
    empty = [c for c in COLUMNS if raw[c] is None]  # a parquet file's null
    if empty:
        raise CocaEvalError(f"{where}: {empty[0]}: no value")
    messages = _messages(raw["prompt"], where)
    answer, prefix = raw["answer"], raw["random_string_to_prepend"]
    if not isinstance(answer, str) or not isinstance(prefix, str):
        raise CocaEvalError(f"{where}: answer and random_string_to_prepend must be text")
    if not answer.removeprefix(prefix).strip():  # an empty reference would score any reply's match
        raise CocaEvalError(f"{where}: answer: nothing after random_string_to_prepend")
    needles, desired = _integer(raw, "n_needles", where), _integer(raw, "desired_msg_index", where)
    if needles not in NEEDLES:
        raise CocaEvalError(f"{where}: n_needles: {needles} is not 2, 4 or 8")
    if not 0 <= desired < len(messages) - 1:
        raise CocaEvalError(
            f"{where}: desired_msg_index: {desired} is past the conversation's {len(messages)} messages"
        )
    total, chars = _integer(raw, "total_messages", where), _integer(raw, "n_chars", where)
    return ConversationRow(messages, answer, prefix, needles, desired, total, chars, where)


def _row_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = []
    for needles in NEEDLES:
        for pattern in ("{}needle/*.parquet", "{}needle/*.jsonl", "{}needle*.parquet"):
            found += sorted(root.glob(pattern.format(needles)))
    return list(dict.fromkeys(found))


def _hub_folder(needles: tuple[int, ...]) -> Path:
    advice = "download its 2needle/, 4needle/, 8needle/ folders and pass --data with the folder holding them"
    with from_the_hub(HUB_ID, advice):
        from huggingface_hub import snapshot_download

        patterns = [f"{n}needle*" for n in needles] + [f"{n}needle/*" for n in needles]
        return Path(snapshot_download(HUB_ID, repo_type="dataset", allow_patterns=patterns))


@cache
def conversation_rows(data: str, needles: tuple[int, ...] = NEEDLES) -> tuple[ConversationRow, ...]:
    """Every row of ``data`` (``hub`` or a folder or file) with one of ``needles``, checked."""
    root = _hub_folder(needles) if data == HUB else Path(data).expanduser()
    files = _row_files(root)
    if not files:
        raise CocaEvalError(f"--data {data}: no 2needle/, 4needle/ or 8needle/ *.parquet files of MRCR rows")
    rows = tuple(check_row(row, f"{path} row {i}") for path in files for i, row in enumerate(file_rows(path)))
    return refuse_repeats([r for r in rows if r.needles in needles], lambda r: r.key, "conversation")


def row_files(data: str, source: str = "openai") -> list[Path]:
    """The local files ``--data`` names (for the run's identity): OpenAI's layout, or MRCR v2's CSVs."""
    root = Path(data).expanduser()
    if source == "deepmind" and not root.is_file():
        return sorted(root.glob("mrcr_v2p1_*.csv"))
    return _row_files(root)


def _o200k():
    import tiktoken

    return tiktoken.get_encoding("o200k_base")


@cache
def _encoding(load) -> tuple[object | None, str | None]:
    """``load()``'s encoding, or why it cannot be had: tried once per process, not once per row (a
    tiktoken without its file would try the network for every conversation)."""
    try:
        return load(), None
    except Exception as exc:  # noqa: BLE001 (no tiktoken, no network for its file)
        return None, f"o200k_base unavailable ({type(exc).__name__}): pip install tiktoken, network once"


def openai_tokens(messages: tuple[dict, ...]) -> tuple[int | None, str | None]:
    """The card's token count of a conversation (o200k_base, contents only) and, when it cannot be
    made, why."""
    encoding, why = _encoding(_o200k)
    if encoding is None:
        return None, why
    return sum(len(encoding.encode(m["content"])) for m in messages), None


def openai_bin(tokens: int | None) -> int | None:
    """The upper end of the published bin holding ``tokens`` (None: below 4096 or past 1M, or unknown)."""
    if tokens is None:
        return None
    return next((upper for upper in OPENAI_BINS if upper // 2 < tokens <= upper), None)
