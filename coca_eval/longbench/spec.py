"""The ``longbench`` (v1) and ``longbench_v2`` tasks' registrations, read as the generation base reads a
family, with LongBench's category averages (:mod:`coca_eval.longbench.reading`) and LongBench v2's
table (:mod:`coca_eval.longbench.v2_reading`). v1's samples score an F1, a ROUGE-L or a ratio, so the
gate pairs their mean; v2's are right or wrong, which the same test pairs by McNemar's. Imported by
``coca-eval --help``: every hook is lazy."""

from __future__ import annotations

from coca_eval.generation.family import family_spec
from coca_eval.longbench.reading import READING
from coca_eval.longbench.v2_reading import READING as V2_READING
from coca_eval.registry import lazy
from coca_eval.taskspec import register_task

register_task(
    family_spec(
        READING,
        version=1,
        description="LongBench v1: its 21 tasks on real documents (QA, summaries, few-shot, synthetic, "
        "code), by LongBench's own prompts and truncation or at exact token lengths: LongBench's metric "
        "per task and length.",
        make_params="coca_eval.longbench.params:make_longbench_params",
        make_runner="coca_eval.longbench.task:LongBenchRunner",
        command="coca_eval.cli.longbench:longbench",
        check=lazy("coca_eval.longbench.params:check_methods"),
        graded=True,
        protocol_keys=("protocol", "subset", "chat_template", "answer_budget"),
        preset_params="coca_eval.longbench.params:LongBenchPresetParams",
        shortest=lazy("coca_eval.longbench.params:shortest_length"),
    )
)

register_task(
    family_spec(
        V2_READING,
        version=1,
        description="LongBench v2: its 503 multiple-choice questions on documents of 8k to 2M words, six "
        "domains, by its own prompts and truncation or at exact token lengths: accuracy per domain and "
        "length, and its table by difficulty and length class.",
        make_params="coca_eval.longbench.params:make_longbench_v2_params",
        make_runner="coca_eval.longbench.v2_task:LongBenchV2Runner",
        command="coca_eval.cli.longbench:longbench",
        check=lazy("coca_eval.longbench.params:check_methods"),
        graded=True,
        protocol_keys=("protocol", "context", "chat_template", "answer_budget"),
        preset_params="coca_eval.longbench.params:LongBenchV2PresetParams",
        shortest=lazy("coca_eval.longbench.params:shortest_length"),
    )
)
