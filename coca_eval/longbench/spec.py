"""The ``longbench`` task's registration, read as the generation base reads a family, with LongBench's
category averages (:mod:`coca_eval.longbench.reading`); its samples score an F1, a ROUGE-L or a ratio,
so the gate pairs their mean. Imported by ``coca-eval --help``: every hook is lazy."""

from __future__ import annotations

from coca_eval.generation.family import family_spec
from coca_eval.longbench.reading import READING
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
