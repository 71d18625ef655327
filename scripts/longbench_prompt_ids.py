"""Build the prompts of the LongBench smoke set with LongBench's own ``pred.py`` and print, as JSON, each
prompt's token count and the sha256 of its token ids, for tests/longbench's prompt-parity test.

Run outside this project against a checkout of THUDM/LongBench (an export of its files will do) in an
environment with ``torch``, ``transformers``, ``numpy`` and ``tqdm``. ``pred.py``'s ``get_pred`` runs as
written, on the CPU, with its model replaced by one that records the ids it is given and answers
nothing (its loader, the flash-attention patch, ``datasets`` and the process group are stubbed; the
prompt, its middle cut, its chat framing and its tokenisation are all ``pred.py``'s). The chat variant
frames the prompt with the tokenizer's chat template (``apply_chat_template``, one user turn, the
assistant's turn opened) where ``pred.py`` calls ``build_chat``, which for a model not in its list
leaves the prompt as it is:

    python scripts/longbench_prompt_ids.py LONGBENCH_DIR TOKENIZER_DIR [CHAT_TEMPLATE.jinja] \\
        > tests/longbench/data/prompt_ids_zoo.json
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import types
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "coca_eval" / "longbench" / "smoke" / "data"
MAX_LENGTHS = (1000, 4000)
BUILD_CHAT: dict = {}  # pred.py's own build_chat, kept while a chat variant stands in for it


def load_pred(longbench: Path):
    """``LongBench/pred.py`` as a module, its imports that need a GPU or the network stubbed."""
    sys.modules["llama_flash_attn_monkey_patch"] = types.SimpleNamespace(
        replace_llama_attn_with_flash_attn=lambda: None
    )
    sys.modules.setdefault("datasets", types.SimpleNamespace(load_dataset=None))
    sys.path.insert(0, str(longbench / "LongBench"))
    import pred

    pred.dist = types.SimpleNamespace(destroy_process_group=lambda: None)
    pred.tqdm = lambda rows: rows
    return pred


class CpuTorch:
    """``torch`` as ``pred.py`` sees it, its ``cuda:RANK`` device the CPU."""

    def __init__(self, torch) -> None:
        self._torch = torch

    def __getattr__(self, name: str):
        return getattr(self._torch, name)

    def device(self, *_):
        return self._torch.device("cpu")


class Recorder:
    """Stands in for the model: keeps each prompt's ids and generates nothing."""

    def __init__(self) -> None:
        self.prompts: list[list[int]] = []

    def generate(self, input_ids, **_):
        self.prompts.append(input_ids[0].tolist())
        return input_ids


def prompt_ids(pred, tokenizer, task: str, rows: list[dict], max_length: int, chat: str | None):
    import torch

    config = Path(pred.__file__).parent / "config"
    prompt_format = json.loads((config / "dataset2prompt.json").read_text())[task]
    max_gen = json.loads((config / "dataset2maxlen.json").read_text())[task]
    model = Recorder()
    pred.load_model_and_tokenizer = lambda *_: (model, tokenizer)
    pred.torch = CpuTorch(torch)
    pred.build_chat = BUILD_CHAT.setdefault("pred.py", pred.build_chat)
    if chat is not None:
        pred.build_chat = lambda tok, prompt, name: tok.apply_chat_template(
            [{"role": "user", "content": prompt}],
            chat_template=chat,
            add_generation_prompt=True,
            tokenize=False,
        )
    with tempfile.TemporaryDirectory() as out:
        pred.get_pred(0, 1, rows, max_length, max_gen, prompt_format, task, None, "coca-eval-smoke",
                      {"coca-eval-smoke": ""}, f"{out}/pred.jsonl")  # fmt: skip
    return model.prompts


def main() -> None:
    from transformers import AutoTokenizer

    longbench, tokenizer_dir = Path(sys.argv[1]), sys.argv[2]
    chat = Path(sys.argv[3]).read_text() if len(sys.argv) > 3 else None
    pred = load_pred(longbench)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    commit = (longbench / "COMMIT").read_text().strip() if (longbench / "COMMIT").exists() else "unknown"
    records = []
    for path in sorted(DATA.glob("*.jsonl")):
        if path.stem.endswith("_e"):
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for max_length in MAX_LENGTHS:
            for variant in (None, chat) if chat is not None else (None,):
                ids = prompt_ids(pred, tokenizer, path.stem, rows, max_length, variant)
                for index, prompt in enumerate(ids):
                    records.append({
                        "task": path.stem, "index": index, "max_length": max_length,
                        "chat": variant is not None, "tokens": len(prompt),
                        "sha256": hashlib.sha256(json.dumps(prompt).encode()).hexdigest(),
                    })  # fmt: skip
    print(json.dumps({"longbench_commit": commit, "prompts": records}, indent=1))


if __name__ == "__main__":
    main()
