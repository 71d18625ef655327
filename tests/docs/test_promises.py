"""Sentences of the README and the docs that were once false, each held against what the code does.

Behaviour that other tests already pin is named where it lives: a damaged journal line
(tests/faults/test_journal_damage.py), ``--help`` and ``--preset`` (tests/cli/test_preset_options.py),
the model types (tests/models/test_registration.py), plug-ins (tests/test_plugins.py and
tests/docs/test_plugin_example.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bare_runs import run_cli
from doc_blocks import ROOT

from coca_eval.methods import make_method
from coca_eval.presets import get_preset


def _python_path() -> str:
    """The checkout first, then whatever the session added (the checkout's plug-in declarations)."""
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


def page(name: str) -> str:
    """A page with its line breaks folded, so a sentence reads the same wherever it wraps."""
    return re.sub(r"\s+", " ", (ROOT / name).read_text())


def every_page() -> dict[str, str]:
    return {
        str(p.relative_to(ROOT)): page(str(p.relative_to(ROOT)))
        for p in [ROOT / "README.md", *ROOT.glob("docs/*.md")]
    }


def test_the_default_presets_are_the_ones_the_docs_name():
    from coca_eval.cli.passkey import PRESET as PASSKEY
    from coca_eval.cli.ppl import PRESET as PPL

    assert (PPL, PASSKEY) == ("zoo", "zoo-passkey")
    assert "The default preset is `zoo` for `ppl` and `zoo-passkey` for `passkey`" in page("docs/running.md")
    assert "the preset `zoo`, the default of `coca-eval ppl`" in page("README.md")
    for name, text in every_page().items():
        assert not re.search(r"default preset is `embedded`|on the embedded default", text), name


def test_a_bare_passkey_run_is_described_by_its_preset():
    params = get_preset("zoo-passkey", task="passkey").params
    assert (params["samples"], params["max_new_tokens"]) == (25, 16)
    assert (
        "runs the preset `zoo-passkey`: 512..4k, 25 samples per length, greedy answers of up to 16 tokens"
        in (page("README.md"))
    )
    paper = get_preset("passkey", task="passkey").params
    assert (paper["samples"], paper["max_new_tokens"]) == (100, 64)
    assert "`--preset passkey` is the paper's protocol (512..32k, 100 samples, up to 64 tokens)" in page(
        "README.md"
    )
    for name, text in every_page().items():
        assert "`--max-new-tokens` (64)" not in text, name


def test_delta_vs_names_the_label_a_hub_model_gets():
    label = make_method("meta-llama/Llama-2-7b-hf", "none", None, "float32", "hf").label
    readme = page("README.md")
    assert "--model meta-llama/Llama-2-7b-hf" in readme
    assert re.findall(r'--delta-vs "([^"]+)"', readme) == [label]
    assert f"`--model meta-llama/Llama-2-7b-hf` row is labelled `{label}`" in page("docs/reports.md")


def test_no_page_says_a_damaged_journal_stops_the_run():
    """The journal's design (coca_eval/journal.py): a damaged line is skipped with a warning and its work
    redone; tests/faults/test_journal_damage.py checks the behaviour."""
    assert "Any other unreadable line is skipped with a warning naming the journal and the line" in page(
        "docs/results.md"
    )
    for name, text in every_page().items():
        assert not re.search(r"corrupt journal[^.]*exit code 2", text), name


def test_the_gpu_benchmarks_are_said_to_be_recorded_exactly_where_they_are():
    """docs/development.md names the GPU results' folder, and each benchmark it says ran there has its
    report there; vLLM's, said not to have run, has none."""
    recorded = {p.name for p in (ROOT / "reports" / "gpu").glob("*.md")}
    text = page("docs/development.md")
    assert "the GPU ones in `reports/gpu/`" in text
    for report in ("coca_bench_cuda.md", "ppl_gpu_bench.md", "generation_bench.md"):
        assert report in recorded, report
    assert ("`vllm_bench.py --device cuda` has not been run on a GPU yet" in text) == (
        "vllm_bench.md" not in recorded
    )


def test_the_models_page_says_what_the_import_registers():
    text = page("docs/models.md")
    assert "Importing `coca_eval.models` registers all four model types" in text
    assert "`import coca_eval` alone registers nothing" in text
    for name, content in every_page().items():
        assert "Importing `coca_eval` registers" not in content, name


ARGS = ["ppl", "--model", "zoo-rope", "--lengths", "512", "--num-docs", "2", "--doc-tokens", "1024"]


def cells(path: Path) -> list[tuple]:
    run = json.loads(path.read_text())
    return [(c["method"], c["length"], c["value"], c["detail"]["docs"]) for c in run["cells"]]


@pytest.mark.slow
@pytest.mark.torchrun
def test_torchrun_equals_one_process_with_one_thread(tmp_path):
    """docs/many-machines.md: torchrun's ranks run with OMP_NUM_THREADS=1, so a CPU torchrun run equals a
    one-process run with OMP_NUM_THREADS=1, to the last digit of every document's NLL sum."""
    env = {**os.environ, "PYTHONPATH": _python_path(), "HF_HUB_OFFLINE": "1"}
    env.pop("OMP_NUM_THREADS", None)
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    ranks = subprocess.run(
        [*launch, "-m", "coca_eval", *ARGS, "--output", "ranks.json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert ranks.returncode == 0, ranks.stderr[-3000:]
    single = subprocess.run(
        [sys.executable, "-m", "coca_eval", *ARGS, "--output", "one.json"],
        cwd=tmp_path, env={**env, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert single.returncode == 0, single.stderr[-3000:]
    assert cells(tmp_path / "ranks.json") == cells(tmp_path / "one.json")
    assert "OMP_NUM_THREADS=1` (its default with more than one process per node)" in page(
        "docs/many-machines.md"
    )


def _readme_figures() -> list[float]:
    """The five perplexities the README quotes for the main job, in the order it names them: RoFormer at
    512 and at 4k, then dynamic NTK, CoCA and dynamic NTK & CoCA at 4k."""
    text = page("README.md")
    match = re.search(
        r"from (\d+\.\d) at its trained 512 tokens to (\d+\.\d) at 4k, dynamic NTK holds it at "
        r"(\d+\.\d), CoCA at (\d+\.\d) and dynamic NTK & CoCA at (\d+\.\d)",
        text,
    )
    assert match, "the README no longer quotes the main job's figures in the sentence this test reads"
    return [float(v) for v in match.groups()]


@pytest.mark.slow
def test_the_main_job_prints_the_readme_figures(tmp_path):
    """README: the main job (`coca-eval ppl --stride 512`, the default preset through the zoo plug-in)
    gives RoFormer's rise from 512 to 4k and the three remedies' values at 4k, to the digit quoted."""
    run = run_cli(["ppl", "--stride", "512"], tmp_path, "main.json", timeout=900).run
    value = {(c["method"], c["length"]): c["value"] for c in run["cells"] if c["status"] == "ok"}
    methods = list(dict.fromkeys(c["method"] for c in run["cells"]))
    assert len(methods) == 4, methods
    rope, ntk, coca, both = methods
    measured = [value[rope, 512], value[rope, 4096], value[ntk, 4096], value[coca, 4096], value[both, 4096]]
    assert [round(v, 1) for v in measured] == _readme_figures(), (methods, measured)


def _readme_passkey_counts() -> list[int]:
    """The keys out of 25 the README quotes for a bare `coca-eval passkey`, in the order it names them:
    RoFormer and + CoCA at 512, + dynamic NTK & CoCA at 1k and 2k, + dynamic NTK at 1k and 2k."""
    match = re.search(
        r"RoFormer retrieves (\d+) of 25 keys at 512 tokens and none past its window, \+ CoCA (\d+) of 25 "
        r"at 512 and none past, \+ dynamic NTK & CoCA (\d+) of 25 at 1k and (\d+) at 2k where \+ dynamic "
        r"NTK alone gets (\d+) and (\d+)",
        page("README.md"),
    )
    assert match, "the README no longer quotes the bare passkey run's counts in the sentence this test reads"
    return [int(v) for v in match.groups()]


@pytest.mark.slow
def test_a_bare_passkey_run_retrieves_the_keys_the_readme_counts(bare_run):
    """README: a bare `coca-eval passkey` (zoo-passkey, 512..4k, 25 samples): the keys each method
    retrieves where the README counts them, and none past 512 where it says so."""
    cells = {(c["method"], c["length"]): c for c in bare_run("passkey").ok_cells()}
    keys = {where: sum(s["correct"] for s in c["detail"]["samples"]) for where, c in cells.items()}
    rope, coca = "RoFormer", "RoFormer + CoCA"
    ntk, both = "RoFormer + dynamic NTK", "RoFormer + dynamic NTK & CoCA"
    quoted = [keys[rope, 512], keys[coca, 512], keys[both, 1024], keys[both, 2048], keys[ntk, 1024]]
    assert [*quoted, keys[ntk, 2048]] == _readme_passkey_counts()
    assert {keys[m, n] for m in (rope, coca) for n in (1024, 2048, 4096)} == {0}  # "none past"
    assert len(cells) == 16  # four methods at 512..4k, every cell ok


def _printed_tables(name: str, heading: str) -> tuple[list[dict[str, list[str]]], list[str]]:
    """The bare run's output as page ``name`` quotes it, in the ```text block that opens with
    ``heading``: each box table as ``row label -> its cells`` (a label wrapped over lines joined), and
    the lines outside the tables (the notes)."""
    block = re.search(rf"```text\n({re.escape(heading)}.*?)```", (ROOT / name).read_text(), re.S)
    assert block, f"{name} no longer quotes the run headed {heading!r} that this test reads"
    tables, notes, rows, last = [], [], None, None
    for line in block.group(1).splitlines():
        if line.startswith("┏"):
            rows, last = {}, None
            tables.append(rows)
        elif line.startswith("│") and rows is not None:
            label, *cells = [part.strip() for part in line.strip("│").split("│")]
            if label and any(cells):
                rows[label], last = cells, label
            elif last is not None:  # a wrapped label's second line
                rows[last + label] = rows.pop(last)
                last += label
        elif not line.startswith(("┃", "┡", "└", "┗")):
            notes.append(line)
    return tables, notes


def _scores(rows: dict[str, list[str]], skip: tuple[str, ...]) -> dict[tuple[str, int], float]:
    return {
        (task, n): float(cells[k])
        for task, cells in rows.items()
        if task not in skip
        for k, n in enumerate((1024, 2048))
    }


@pytest.mark.slow
def test_a_bare_ruler_run_prints_the_table_its_page_quotes(bare_run):
    """docs/ruler.md: a bare `coca-eval ruler` (the ruler-quick preset, SmolLM2-135M-Instruct through its
    chat template, offline) gives every task's score at 1k and 2k as quoted, and the effective-length
    sentence."""
    done = bare_run("ruler")
    measured = {(c["dataset"], c["length"]): round(c["value"], 1) for c in done.ok_cells()}
    (tasks, _), notes = _printed_tables("docs/ruler.md", "RULER, N = prompt + answer budget")
    assert measured == _scores(tasks, ("Average", "95 % lower bound"))
    (effective,) = [n for n in notes if n.startswith("Effective length at")]
    assert effective in re.sub(r"\s+", " ", done.stdout)


@pytest.mark.slow
def test_a_bare_helmet_run_prints_the_table_its_page_quotes(bare_run):
    """docs/helmet.md: a bare `coca-eval helmet` (the helmet-quick preset, SmolLM2-135M-Instruct,
    offline) gives every recall task's score at 1k and 2k as quoted, their average, and the effective
    length."""
    run = bare_run("helmet").run
    measured = {(c["dataset"], c["length"]): round(c["value"], 1) for c in bare_run("helmet").ok_cells()}
    (tasks, summary), _ = _printed_tables("docs/helmet.md", "HELMET, protocol exact")
    assert measured == _scores(tasks, ("Recall average",))
    (reading,) = [m["Recall"] for m in run["config"]["effective_length"]["methods"].values()]
    average = tuple(float(v) for v in tasks["Recall average"])
    assert tuple(round(reading["average"][n], 1) for n in ("1024", "2048")) == average
    ((method, cells),) = summary.items()
    assert method.endswith(": Recall") and cells[-1] == _length(reading["effective"])


@pytest.mark.slow
def test_a_bare_babilong_run_prints_the_table_its_page_quotes(bare_run):
    """docs/babilong.md: a bare `coca-eval babilong` (the babilong-quick preset, SmolLM2-135M-Instruct,
    offline) gives each task's accuracy at 1k and 2k as quoted, their average, and the effective length."""
    run = bare_run("babilong").run
    measured = {(c["dataset"], c["length"]): round(c["value"], 1) for c in bare_run("babilong").ok_cells()}
    (tasks, summary), _ = _printed_tables("docs/babilong.md", "BABILong, source generate")
    assert measured == _scores(tasks, ("Average",))
    (reading,) = run["config"]["effective_length"]["methods"].values()
    average = tuple(float(v) for v in tasks["Average"])
    assert tuple(round(reading["average"][n], 1) for n in ("1024", "2048")) == average
    ((_, cells),) = summary.items()
    assert cells[-1] == _length(reading["effective"])


def _length(tokens: int | None) -> str:
    from coca_eval.lengths import format_length

    return "<1k" if tokens is None else format_length(tokens)


def test_the_methods_file_example_counts_its_rows():
    """docs/running.md's methods-file example says how many methods its YAML holds."""
    text = (ROOT / "docs" / "running.md").read_text()
    block = re.search(r"# slow: (\w+) methods at two lengths.*?methods:\n(.*?)YAML", text, re.S)
    assert block, "the methods-file example is gone"
    rows = [line for line in block.group(2).splitlines() if line.strip().startswith("- {")]
    words = {"two": 2, "three": 3, "four": 4, "five": 5}
    assert words[block.group(1)] == len(rows)


def test_the_ruler_page_says_when_far_cells_stop():
    """docs/ruler.md's sample counts for cells far from 85.6 are what the stopping rule gives."""
    from coca_eval.sequential import StoppingRule, stop_point

    rule = StoppingRule(500, threshold=0.856)
    never, always = stop_point([0.0] * 500, rule).spent, stop_point([1.0] * 500, rule).spent
    text = page("docs/ruler.md")
    assert f"A cell that never retrieves stops after {never} samples" in text
    assert f"one that always does needs {always} to clear 85.6" in text


def test_the_ppl_page_says_what_bos_first_does_without_a_bos_token():
    """lm-eval's prefix token falls back to EOS for a tokenizer without BOS; `--bos first` refuses such
    a tokenizer instead, and the page says so rather than claiming lm-eval's convention exactly."""
    from types import SimpleNamespace

    from coca_eval.errors import CocaEvalError
    from coca_eval.ppl.task import resolve_bos

    text = " ".join(page("docs/ppl.md").split())
    assert "`--bos first` refuses such a tokenizer in one line" in text and "exactly lm-eval" not in text
    with pytest.raises(CocaEvalError, match="--bos first needs a BOS token, and this tokenizer has none"):
        resolve_bos("first", SimpleNamespace(bos_token_id=None, adds_bos=False))
    assert resolve_bos("first", SimpleNamespace(bos_token_id=1, adds_bos=False)) == "first"


def test_the_docs_lists_name_every_page():
    """The home page's table, the README's documentation list and the site's navigation each link
    every page of docs/ (RULER, the measurements and sequential sampling were once missing)."""
    import yaml

    names = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "index.md")
    index, readme = page("docs/index.md"), page("README.md")
    nav = json.dumps(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    for name in names:
        assert f"]({name})" in index, f"docs/index.md does not link {name}"
        assert f"](docs/{name})" in readme, f"the README's documentation list does not link {name}"
        assert f'"{name}"' in nav, f"mkdocs.yml's nav does not list {name}"


@pytest.mark.slow
def test_a_bare_graphwalks_run_prints_the_table_its_page_quotes(bare_run):
    """docs/graphwalks.md: a bare `coca-eval graphwalks` (graphwalks-quick) gives each task's score at 1k
    and 2k as quoted, and the effective length as the summary prints it."""
    run = bare_run("graphwalks").run
    measured = {(c["dataset"], c["length"]): round(c["value"], 1) for c in bare_run("graphwalks").ok_cells()}
    (tasks, summary), _ = _printed_tables("docs/graphwalks.md", "GraphWalks, source generate")
    assert measured == _scores(tasks, ("Average",))
    (reading,) = run["config"]["effective_length"]["methods"].values()
    ((_, cells),) = summary.items()
    expected = (
        f"undefined ({reading['undefined']})" if reading.get("undefined") else _length(reading["effective"])
    )
    assert cells[-1] == expected


@pytest.mark.slow
def test_a_bare_mrcr_run_prints_the_table_its_page_quotes(bare_run):
    """docs/mrcr.md: a bare `coca-eval mrcr` (mrcr-quick) gives each needle count's score at 1k and 2k
    as quoted, each row's area as the mean of its two points (one octave apart on the log2 axis), and
    the effective length as the summary prints it."""
    done = bare_run("mrcr")
    measured = {(c["dataset"], c["length"]): round(c["value"], 1) for c in done.ok_cells()}
    (tasks, summary), _ = _printed_tables("docs/mrcr.md", "MRCR, source generate")
    assert measured == _scores(tasks, ("Average",))
    for task in ("2needle", "4needle"):
        values = [c["value"] for c in done.ok_cells() if c["dataset"] == task]
        assert float(tasks[task][2]) == round(sum(values) / 2, 1)
    (reading,) = done.run["config"]["effective_length"]["methods"].values()
    ((_, cells),) = summary.items()
    expected = (
        f"undefined ({reading['undefined']})" if reading.get("undefined") else _length(reading["effective"])
    )
    assert cells[-1] == expected


@pytest.mark.slow
def test_a_bare_longbench_run_prints_the_table_its_page_quotes(bare_run):
    """docs/longbench.md: a bare `coca-eval longbench` (longbench-quick, its smoke set) gives each task's
    score at 1k and 2k as quoted, the average over tasks, and the effective length as printed."""
    done = bare_run("longbench")
    measured = {(c["dataset"], c["length"]): round(c["value"], 1) for c in done.ok_cells()}
    (tasks, summary), _ = _printed_tables("docs/longbench.md", "LongBench, N = prompt + answer budget")
    assert measured == _scores(tasks, ("Average",))
    for k, n in enumerate((1024, 2048)):
        values = [c["value"] for c in done.ok_cells() if c["length"] == n]
        assert float(tasks["Average"][k]) == round(sum(values) / len(values), 1)
    (reading,) = done.run["config"]["effective_length"]["methods"].values()
    ((_, cells),) = summary.items()
    expected = (
        f"undefined ({reading['undefined']})" if reading.get("undefined") else _length(reading["effective"])
    )
    assert cells[-1] == expected
