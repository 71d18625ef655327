"""``coca-eval ruler --replay LM_EVAL_DIR``: answer the very prompts of an lm-eval RULER run.

lm-evaluation-harness's RULER port draws its own needles, so no RULER run of ours holds its samples,
and the gate rightly refuses to pair an imported lm-eval run (``coca-eval import lm-eval``) with one.
A replay closes that gap: it reads lm-eval's samples files (run with ``--log_samples``), answers each
logged prompt (the request's context, lm-eval's answer prefix included) on the given methods, scores
the answers with RULER's scoring, and records every sample under lm-eval's own index and references
with the sha256 of its prompt text (lm-eval's ``prompt_hash``). The run's parameters are the import's,
so the gate compares the two sample by sample: one checkpoint scored in lm-eval, the next here.

The prompts go in as lm-eval's hf model (0.4.x) at its defaults tokenizes them: with the tokenizer's
own special tokens (BOS where the tokenizer adds one), none when the text already begins with BOS. No
chat template is applied: a chat-templated lm-eval run logged the rendered text, which is answered as
it is, and the run records that template's hash as the import does. The answer budget is lm-eval's
``max_gen_toks``; decoding stops at EOS and the budget, as lm-eval's RULER port does (it sets no stop
strings; a task that sets some is refused).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from coca_eval.data.harness_logs import HAYSTACK, IMPORTERS, RULER_NAMES, read_results, read_samples
from coca_eval.errors import CocaEvalError
from coca_eval.ruler.params import RulerParams
from coca_eval.ruler.task import RulerRunner


@dataclass(frozen=True)
class ReplayPrompt:
    """One logged request: its text, lm-eval's index and references, and the hash lm-eval gave it."""

    index: int
    text: str
    answers: tuple[str, ...]
    prompt_sha256: str
    doc_id: int


@dataclass(frozen=True)
class ReplaySource:
    """What a replay reads from one lm-eval output folder.

    ``prompts`` maps (our task name, length) to its prompts in index order; ``budgets`` our task name
    to lm-eval's ``max_gen_toks``; ``identity`` is the parameters ``coca-eval import lm-eval`` records
    for the folder, which the replay records as its own so the gate compares the two runs."""

    folder: str
    prompts: dict[tuple[str, int], list[ReplayPrompt]]
    budgets: dict[str, int]
    identity: dict[str, Any]
    source: dict[str, Any]


def load_replay(folder: str) -> ReplaySource:
    """The folder's RULER prompts, every one checked against lm-eval's hash of it; the folder is also
    imported (every score checked), so a replay never pairs with a run the import would refuse. Read
    once per state of the folder's files (the parameters' identity asks for it often)."""
    files = sorted(Path(folder).rglob("*.json*")) if Path(folder).is_dir() else []
    return _read_replay(str(folder), tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files))


@functools.lru_cache(maxsize=8)
def _read_replay(folder: str, stamp: tuple) -> ReplaySource:
    path, results = read_results(Path(folder))
    other = [t for t in results.results if t not in RULER_NAMES]
    if other:
        raise CocaEvalError(
            f"--replay answers lm-eval's RULER tasks; {path.name} also holds {', '.join(sorted(other))}"
        )
    imported = IMPORTERS.get("lm-eval")(Path(folder))  # registry look-up: the import layer's reading
    prompts: dict[tuple[str, int], list[ReplayPrompt]] = {}
    budgets = {}
    for task in sorted(results.results):
        generation = (results.configs.get(task) or {}).get("generation_kwargs") or {}
        if generation.get("until"):
            raise CocaEvalError(
                f"{path.name}: {task} stops at strings {generation['until']!r}; a replay decodes to EOS "
                "and the budget, as lm-eval's RULER port does"
            )
        budgets[RULER_NAMES[task]] = _budget(task, generation, path.name)
        for sample in read_samples(path, task):
            length, prompt = _prompt(sample, f"{path.name} {task}")
            prompts.setdefault((RULER_NAMES[task], length), []).append(prompt)
    for (task, length), listed in prompts.items():
        listed.sort(key=lambda p: p.index)
        if [p.index for p in listed] != list(range(len(listed))):
            raise CocaEvalError(
                f"{path.name}: {task} at {length} holds indices {[p.index for p in listed][:8]}; a replay "
                "needs 0..n-1 at each length (lm-eval's --limit, not --samples)"
            )
    return ReplaySource(
        folder=str(folder),
        prompts=prompts,
        budgets=budgets,
        identity={**imported.config["params"]},
        source=imported.config["source"],
    )


def _budget(task: str, generation: dict, where: str) -> int:
    budget = generation.get("max_gen_toks")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise CocaEvalError(f"{where}: {task} has no max_gen_toks in its generation_kwargs")
    return budget


def _prompt(sample, where: str) -> tuple[int, ReplayPrompt]:
    """A samples-file line as a prompt; its text must hash to lm-eval's ``prompt_hash``."""
    request = sample.arguments.get("gen_args_0") or {}
    text = request.get("arg_0")
    if not isinstance(text, str):
        raise CocaEvalError(f"{where}: doc {sample.doc_id} logs no prompt (arguments.gen_args_0.arg_0)")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != sample.prompt_hash:
        raise CocaEvalError(f"{where}: doc {sample.doc_id}'s prompt does not hash to its prompt_hash")
    length = sample.doc["max_length"]  # the import checked it is there
    index = int(sample.doc.get("index", sample.doc_id))
    answers = tuple(str(a) for a in sample.doc["outputs"])
    return length, ReplayPrompt(index, text, answers, digest, sample.doc_id)


@dataclass(frozen=True)
class ReplayParams(RulerParams):
    """RULER's parameters read from an lm-eval folder: its tasks, lengths and sample counts, and as
    :meth:`identity` the import's parameters (only ``threshold`` is the user's: it changes no cell)."""

    replay: str = ""

    def identity(self) -> dict[str, Any]:
        return dict(load_replay(self.replay).identity)


def make_replay_params(folder: str, threshold: float | None = None) -> ReplayParams:
    """The parameters of ``--replay FOLDER`` (``threshold``: the effective length's bar, or RULER's)."""
    source = load_replay(str(Path(folder)))
    imported = source.identity  # the import's tasks, lengths and largest sample count
    extra = {} if threshold is None else {"threshold": threshold}
    return ReplayParams(
        tasks=tuple(imported["tasks"]),
        lengths=tuple(imported["lengths"]),
        samples=imported["samples"],
        replay=source.folder,
        **extra,
    )


@dataclass(frozen=True)
class ReplayState:
    """What every replayed cell of one loaded model shares: how it tokenizes a logged prompt."""

    encode: Any
    bos: int | None  # put in front unless the text already begins with BOS's text
    bos_text: str
    limit: int | None  # the model's positions
    chat_digest: str | None  # the lm-eval run's chat template hash (its text is already rendered)

    def ids(self, text: str) -> list[int]:
        if self.bos is None or (self.bos_text and text.startswith(self.bos_text)):
            return self.encode(text)
        return [self.bos, *self.encode(text)]


class ReplayRunner(RulerRunner):
    """:class:`RulerRunner` whose samples are an lm-eval run's logged prompts (see the module doc)."""

    def __init__(self, params: ReplayParams, journal, progress, **options):
        super().__init__(params, journal, progress, **options)
        self.source = load_replay(params.replay)
        self.prefix_reuse = False  # the logged prompts share no prefix the builder knows of

    def prepare(self, method, backend) -> ReplayState:
        if callable(getattr(backend, "generate_chat", None)):
            raise CocaEvalError(
                f"{method.label}: --replay sends lm-eval's logged prompt text as it is; a chat API "
                "would frame it again (use a completions or local backend)"
            )
        bos = backend.bos_token_id if backend.adds_bos else None
        bos_text = backend.tokenizer.decode([bos]) if bos is not None else ""
        chat = self.source.identity["chat_template"]  # the import's: the template's hash, or none
        limit = getattr(backend, "position_limit", None)
        return ReplayState(backend.encode, bos, bos_text, limit, None if chat == "none" else chat)

    def task_of(self, dataset: str):
        """RULER's task (its scoring) with lm-eval's answer budget."""
        return replace(super().task_of(dataset), answer_budget=self.source.budgets[dataset])

    def cell_context(self, state, task) -> dict:
        return {"haystack": HAYSTACK}

    def build_samples(self, state: ReplayState, dataset: str, length: int) -> list:
        """The cell's logged prompts, tokenized; a prompt that does not fit the model with its answer
        budget makes the cell an error cell (lm-eval would have cut its left end off)."""
        from coca_eval.generation.assembly import PromptSample

        prompts = self.source.prompts.get((dataset, length))
        if not prompts:
            raise CocaEvalError(f"the lm-eval run holds no {dataset} samples at {length}")
        budget = self.source.budgets[dataset]
        samples = []
        for prompt in prompts:
            ids = state.ids(prompt.text)
            if state.limit is not None and len(ids) + budget > state.limit:
                raise CocaEvalError(
                    f"sample {prompt.index}: {len(ids)} prompt + {budget} answer tokens exceed the "
                    f"model's {state.limit} positions"
                )
            detail = {
                "prompt_sha256": prompt.prompt_sha256,
                "doc_id": prompt.doc_id,
                "prompt_tokens": len(ids),
            }
            samples.append(PromptSample(dataset, prompt.index, ids, prompt.answers, 0, detail, (0, len(ids))))
        return samples

    def cell_identity(self, method, weights: str, length: int, dataset: str) -> dict:
        """RULER's, and the hashes of the cell's prompts and references: the run's parameters are
        lm-eval's, which two lm-eval runs can share with other prompts, and a folder's references can
        be corrected while its prompts stay; a finished cell is taken from the journal whole, so it
        resumes only for the very same prompts scored against the very same references."""
        identity = super().cell_identity(method, weights, length, dataset)
        prompts = self.source.prompts.get((dataset, length)) or []
        identity["prompts"] = hashlib.sha256("".join(p.prompt_sha256 for p in prompts).encode()).hexdigest()
        references = json.dumps([[p.index, list(p.answers)] for p in prompts], ensure_ascii=False)
        identity["references"] = hashlib.sha256(references.encode("utf-8")).hexdigest()
        return identity


# What a replay takes from the lm-eval run: giving one of them as well is a contradiction.
REPLAYED = ("tasks", "lengths", "samples", "max_samples", "target_width", "seed", "haystack", "qa_data",
            "chat_template", "bos", "length_counts")  # fmt: skip


def make_params(values: dict[str, Any]) -> RulerParams:
    """The ``ruler`` spec's parameters: ``--replay FOLDER`` (``values["replay"]``) takes lm-eval's, with
    the user's ``--threshold``, and refuses another RULER option in one line (the replayed prompts fix
    it); without it, RULER's own."""
    from coca_eval.ruler.params import make_ruler_params

    folder = values.get("replay")
    if not folder:
        return make_ruler_params({k: v for k, v in values.items() if k != "replay"})
    given = [f"--{name.replace('_', '-')}" for name in REPLAYED if values.get(name) is not None]
    if given:
        raise CocaEvalError(f"--replay takes {', '.join(given)} from the lm-eval run; drop them")
    return make_replay_params(folder, values.get("threshold"))


def make_runner(params, journal, progress, **options) -> RulerRunner:
    """The ``ruler`` spec's runner: a replay of an lm-eval run, or RULER's own prompts."""
    runner = ReplayRunner if isinstance(params, ReplayParams) else RulerRunner
    return runner(params, journal, progress, **options)


def record_replay(run, params) -> None:
    """Where a replay's prompts came from, in its config (the finish hook's part)."""
    if isinstance(params, ReplayParams):
        source = load_replay(params.replay)
        run.config["replay_of"] = {"folder": source.folder, **source.source}
