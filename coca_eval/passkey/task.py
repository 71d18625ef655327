"""The ``passkey`` task: methods x lengths of retrieval accuracy, journaled per sample.

Samples are the units a split run divides (``--shard``, torchrun); :func:`combine_cell` forms a cell
from their records anywhere, without a model.
"""

from __future__ import annotations

from coca_eval.errors import CocaEvalError, NonFiniteOutput
from coca_eval.generation.task import GenerationTask, keeping, preset_puts_bos, sample_error
from coca_eval.generation.thinking import model_thinking
from coca_eval.journal import cell_key
from coca_eval.methods import MethodSpec
from coca_eval.passkey.answer import accuracy_detail, passkey_stop, score_output
from coca_eval.passkey.params import PasskeyParams, chat_option
from coca_eval.passkey.prompts import PasskeyPrompt, PasskeySample, PromptBuilder, draw_samples, parse_depths
from coca_eval.passkey.spec import PASSKEY_TASK_VERSION
from coca_eval.passkey.templates import TEMPLATES
from coca_eval.results import Cell
from coca_eval.rounds import sample_in_rounds
from coca_eval.sequential import visiting_order


def prompt_builder(params: PasskeyParams, backend, model: str | None = None, thinking=None) -> PromptBuilder:
    """BOS goes in front as ``params.bos`` says. ``auto``: when the tokenizer puts it there by default
    (LLaMA, Gemma), or when ``model`` is a preset whose training documents each followed it (models
    trained here, whose every passkey example came after ``<|endoftext|>``). ``always``: for any model, where
    the tokenizer has a BOS token. ``never``: not even where the tokenizer would. The chat template is
    :func:`~coca_eval.passkey.params.chat_option`'s (none: the prompt as it always was), rendered with
    ``thinking``'s template variables."""
    from coca_eval.chat import chat_frame, template_text

    if params.bos == "always" and backend.bos_token_id is None:
        raise CocaEvalError("--bos always needs a BOS token, and this tokenizer has none")
    by_tokenizer = params.bos == "auto" and backend.adds_bos
    wanted = params.bos == "always" or by_tokenizer or preset_puts_bos(params, model)
    bos = backend.bos_token_id if wanted else None
    option = chat_option(params, model)
    # a backend that only encodes (no tokenizer object) has no template to read
    tokenizer = getattr(backend, "tokenizer", None)
    variables = thinking.variables(template_text(option, tokenizer)) if thinking and option != "none" else {}
    chat = chat_frame(option, tokenizer, variables) if option != "none" else None
    return PromptBuilder(TEMPLATES.get(params.template), backend.encode, bos, chat)


def build_prompts(params: PasskeyParams, builder: PromptBuilder, length: int) -> list[PasskeyPrompt]:
    return [builder.build(sample, length) for sample in draw_samples_for(params, length)]


def draw_samples_for(params: PasskeyParams, length: int) -> list[PasskeySample]:
    return draw_samples(params.seed, length, params.drawn_samples, parse_depths(params.depths))


class PasskeyTask(GenerationTask):
    """Passkey retrieval as a :class:`~coca_eval.runner.CellTask`."""

    name, metric, dataset = "passkey", "accuracy", None
    version = PASSKEY_TASK_VERSION
    decodes_thoughts = True

    def cell_key(self, method: MethodSpec, weights: str, length: int) -> str:
        identity = self.identity(method, weights, length)
        if chat_option(self.params, method.model) != "none" and "chat_template" not in identity["params"]:
            identity["params"]["chat_template"] = "auto (the preset reads through its chat template)"
        if self.thinking.identity() is not None:  # the defaults leave keys as they were before
            identity["thinking"] = self.thinking.identity()
        return cell_key(identity)

    def prepare(self, method: MethodSpec, backend) -> PromptBuilder:
        return prompt_builder(self.params, backend, method.model, self.thinking)

    def build_samples(self, builder: PromptBuilder, dataset: str | None, length: int) -> list:
        """The cell's prompts as the generation base's samples (``--dump-prompts``): each one's key
        is its reference."""
        from coca_eval.generation.assembly import PromptSample

        samples = draw_samples_for(self.params, length)
        prompts = [builder.build(sample, length) for sample in samples]
        return [
            PromptSample("passkey", s.index, p.ids, (str(s.key),), p.shared_prefix, {})
            for s, p in zip(samples, prompts, strict=True)
        ]

    def evaluate(self, method: MethodSpec, backend, builder: PromptBuilder, length: int, key: str) -> Cell:
        base = dict(task="passkey", method=method.label, metric="accuracy", length=length)
        thinking = model_thinking(self.thinking, self.params, backend, chat_option(self.params, method.model))
        plan = thinking.plan
        reason = self._too_long(backend.position_limit, length, plan.budget if plan is not None else 0)
        if reason:
            return Cell(**base, status="error", detail={"error": reason})
        samples = draw_samples_for(self.params, length)
        try:
            prompts = [builder.build(sample, length) for sample in samples]
        except CocaEvalError as exc:  # a length too short for the template is this cell's problem only
            return Cell(**base, status="error", detail={"error": str(exc)})
        done = self._journaled(key, samples)
        mine = self.share.owned(len(prompts))
        self.progress.start_cell(
            f"{method.label} @ {length}", len(mine), len(done.intersection(map(str, mine)))
        )
        reused = []

        def decode(indices: list[int]) -> None:
            """Answer and journal the samples of ``indices`` that are not journaled yet."""
            todo = [i for i in indices if str(i) not in done]

            def record(position: int, tokens: list[int], thought=None) -> None:
                i, prompt = todo[position], prompts[todo[position]]
                output = backend.tokenizer.decode(tokens, skip_special_tokens=True)
                entry = {
                    "index": i,
                    "key": samples[i].key,
                    "depth": samples[i].depth,
                    "key_position": prompt.key_start / length,
                    "distance": prompt.distance,
                    "output": output,
                    **(thought.record(plan, backend.tokenizer) if thought is not None else {}),
                    **score_output(output, samples[i].key),
                }
                self.journal.record_part(key, str(i), entry)
                self.progress.advance()

            budget = self.params.max_new_tokens + (plan.budget if plan is not None else 0)
            self.progress.expect_work(sum(len(prompts[i].ids) + budget for i in todo))
            try:
                reused.append(
                    greedy_call(backend, plan)(
                        [prompts[i].ids for i in todo],
                        [prompts[i].shared_prefix for i in todo],
                        passkey_stop(self.params.max_new_tokens),
                        record,
                        prefix_reuse=self.prefix_reuse,
                        hold_dynamic_rope=self.params.dynamic_rope == "hold",
                        batch_size=self.batch_size,
                    )
                )
            except NonFiniteOutput as exc:
                raise sample_error(exc, dict(enumerate(todo))) or exc from None

        def context() -> dict:
            values = {
                "template": self.params.template,
                "max_new_tokens": self.params.max_new_tokens,
                "prefix_reuse": any(reused),
                **thinking.context,
            }
            if builder.chat is not None:  # a plain prompt's cell stays as it always was
                values["chat_template"] = builder.chat.digest
            return values

        rule = self.params.stopping_rule()
        try:
            if rule is not None:
                return self._sequential_cell(base, key, rule, length, decode, context)
            decode(mine)
        except NonFiniteOutput as exc:  # the error cell keeps the samples answered beside the failed one
            kept = self._journaled(key, samples).intersection(map(str, mine))
            raise keeping(exc, self.journal.parts.get(key, {}), kept) from None
        records = {i: self.journal.parts[key][str(i)] for i in mine}
        return self.share.cell(base, records, len(prompts), context(), combine_cell)

    def _sequential_cell(self, base: dict, key: str, rule, length: int, decode, context) -> Cell:
        """``--samples auto``: rounds of samples in their visiting order until ``rule`` stops; the cell
        holds the samples spent (in index order) and the rule's outcome in ``detail["sequential"]``."""
        parts = self.journal.parts
        order = visiting_order("passkey", self.params.seed, length, rule.max_samples)
        outcome = sample_in_rounds(order, rule, decode, lambda i: float(parts[key][str(i)]["correct"]))
        spent = sorted(order[: outcome.spent])
        records = [parts[key][str(i)] for i in spent]
        return combine_cell(base, records, {**context(), "sequential": outcome.detail(rule)})

    def _too_long(self, limit: int | None, length: int, thought: int = 0) -> str | None:
        """Why a prompt of ``length``, its thought and its answer do not fit the model's positions (None
        if they do)."""
        new = self.params.max_new_tokens + thought
        if limit is None or length + new <= limit:
            return None
        return f"{length} + {new} new tokens exceed the model's {limit} positions"

    def _journaled(self, key: str, samples: list[PasskeySample]) -> set[str]:
        """The indices of the cell's journaled answers that are still its samples' (same index, same key)
        and scored as their outputs score: a journal written under other samples is not taken for this
        one, and a forged or corrupted part (``correct`` not what its output earns) is answered again."""
        return {
            i
            for i, part in self.journal.parts.get(key, {}).items()
            if i.isdigit()
            and int(i) < len(samples)
            and part.get("key") == samples[int(i)].key
            and isinstance(part.get("output"), str)
            and all(part.get(k) == v for k, v in score_output(part["output"], samples[int(i)].key).items())
        }


def greedy_call(backend, plan):
    """The backend's ``generate_greedy``, or with a thought ``plan`` the two calls that decode each
    thought apart before its answer (:mod:`coca_eval.generation.thought`)."""
    if plan is None:
        return backend.generate_greedy
    from functools import partial

    from coca_eval.generation.thought import generate_with_thought

    return partial(generate_with_thought, backend, plan)


def combine_cell(base: dict, records: list[dict], context: dict) -> Cell:
    """The cell from every sample's record (in sample order) and how they were decoded (``context``):
    the spec's ``combine``, so a merged or gathered cell is made by this same code."""
    detail = {**accuracy_detail(records), "samples": records, **context}
    if any("thought_tokens" in r for r in records):  # a thinking run: the share its budget cut
        detail["cut_in_thought"] = sum(bool(r.get("thought_closed_by_budget")) for r in records) / len(
            records
        )
    # in points, and saying so: a journal keeps cells without a results file's schema to date them
    return Cell(**{**base, "unit": "points"}, value=detail["accuracy"], n=len(records), detail=detail)
