"""The shipped commands besides the tasks', registered lazily: listing them imports none of them."""

from __future__ import annotations

from coca_eval.cli.group import COMMANDS, CommandEntry

for name, help_text in (
    ("tasks", "List registered tasks and their presets."),
    ("models", "List model presets (any local directory or hub id works too)."),
    ("report", "Tables (Markdown, LaTeX, CSV, HTML) and plots from results files, like the paper's."),
    ("gate", "Fail (exit 1) when a candidate run regresses against a baseline run."),
    ("convert", "Write a coca-eval CoCA checkpoint from a reference or plain LLaMA checkpoint."),
    ("merge", "One run from the results files of its --shard K/N jobs."),
):
    COMMANDS.add(name, CommandEntry(f"coca_eval.cli.commands:{name}", help_text))
COMMANDS.add(
    "aa-lcr",
    CommandEntry("coca_eval.cli.aa_lcr:aa_lcr", "AA-LCR: long-context reasoning over document sets, judged."),
)
COMMANDS.add(
    "judge-agreement",
    CommandEntry("coca_eval.cli.judging:judge_agreement", "How often two judges agree on a run's samples."),
)
COMMANDS.add(
    "import",
    CommandEntry("coca_eval.cli.imports:import_group", "Another harness's outputs as a results file."),
)
COMMANDS.add(
    "export",
    CommandEntry("coca_eval.cli.exports:export_group", "A results file to W&B, Trackio or the Hub."),
)
COMMANDS.add(
    "analyze",
    CommandEntry(
        "coca_eval.cli.analyses:analyze",
        "Analyses of RoPE models: frequency usage, q-k angles, long-term decay, attention outliers.",
    ),
)
