"""Reading back what W&B's offline mode wrote, as ``wandb sync`` would send it: the run's ``.wandb``
file is a LevelDB-style log (32 KiB blocks, each record a 7-byte header: CRC, length, kind; kinds
1 = whole, 2/3/4 = first/middle/last fragment) of ``wandb_internal_pb2.Record`` messages after a
7-byte file header (``:W&B``, magic, version)."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path

BLOCK = 32768
HEADER = 7


def records(path: Path) -> Iterator:
    """Every ``Record`` in a ``.wandb`` file, in order."""
    from wandb.proto import wandb_internal_pb2

    for chunk in _chunks(path.read_bytes()):
        record = wandb_internal_pb2.Record()
        record.ParseFromString(chunk)
        yield record


def _chunks(data: bytes) -> Iterator[bytes]:
    assert data[:4] == b":W&B", "not a W&B run file"
    position, parts = HEADER, b""
    while position + HEADER <= len(data):
        left_in_block = BLOCK - position % BLOCK
        if left_in_block < HEADER:  # a block's tail too short for a header is padding
            position += left_in_block
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + HEADER])
        chunk = data[position + HEADER : position + HEADER + length]
        position += HEADER + length
        if kind == 1:
            yield chunk
        elif kind == 2:
            parts = chunk
        elif kind == 3:
            parts += chunk
        elif kind == 4:
            yield parts + chunk
        else:  # zero padding up to the block's end
            position += left_in_block - HEADER - length


def offline_run(directory: Path) -> tuple[dict, dict[str, dict]]:
    """The run's config and its logged values (key -> value) from the one offline run under
    ``directory/wandb``."""
    (path,) = directory.glob("wandb/offline-run-*/run-*.wandb")
    config, logged = {}, {}
    for record in records(path):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            config = {i.key: json.loads(i.value_json) for i in record.run.config.update}
        elif kind == "history":
            for item in record.history.item:
                keys = list(item.nested_key) or [item.key]
                logged.setdefault(keys[0], {})[".".join(keys[1:])] = json.loads(item.value_json)
    return config, logged
