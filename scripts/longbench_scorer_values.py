"""Score tests/longbench/data/predictions.json with LongBench's own code and print the values as JSON.

Run outside this project, against a checkout of THUDM/LongBench (an export of its files with a ``COMMIT``
file naming the commit will do), in a venv holding what v1's ``LongBench/metrics.py`` imports (``rouge``,
``jieba``, ``fuzzywuzzy``) and ``numpy`` for ``LongBench/eval.py``. v2's ``pred.py`` imports a model
client stack (openai, transformers, tiktoken, torch, datasets) that its answer extraction never uses; any
of those that is missing is stubbed so the module loads:

    python3 -m venv /tmp/venv-lb && /tmp/venv-lb/bin/pip install rouge==1.0.1 jieba==0.42.1 \
        fuzzywuzzy==0.18.0 numpy
    /tmp/venv-lb/bin/python scripts/longbench_scorer_values.py LONGBENCH_DIR \
        > tests/longbench/data/longbench_values.json

What it records, all from LongBench's functions:

* ``v1_task`` and ``v1_task_e``: the ``result.json`` that ``eval.py`` (and ``eval.py --e``), run as a
  script, writes for prediction files holding the cases of each task.
* ``v1_sample``: each case scored alone by ``eval.scorer`` with its rounding turned off, so the value is
  100 times the per-sample score (the first-line rule and the best reference come from ``scorer``),
  called at the stack depth the script calls it from (``rouge``'s recursion limit depends on it).
* ``v2``: each response's letter by ``pred.py``'s ``extract_answer`` (after the ``strip`` its
  ``get_pred`` applies) and the table ``result.py`` writes for two result files.
* ``published``: the tables of ``LongBench/README.md`` (per task and per category), so the category
  averages can be held to the numbers LongBench published.
"""

from __future__ import annotations

import _thread
import importlib
import importlib.util
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

_CLIENT_MODULES = {  # what v2's pred.py imports at its top, with the names it reads from each
    "datasets": ("load_dataset",),
    "openai": ("OpenAI",),
    "transformers": ("AutoTokenizer",),
    "tiktoken": (),
    "tqdm": ("tqdm",),
    "torch": (),
    "torch.multiprocessing": (),
}


def _commit(checkout: Path) -> str:
    found = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 else (checkout / "COMMIT").read_text().strip()


def _as_from_eval_main(function, *args):
    """``function(*args)`` called from the first frame of a fresh thread, as ``eval.py``'s module frame
    calls ``scorer`` when run as a script: ``rouge``'s recursion meets Python's limit at a depth that
    counts the frames below it, so the per-sample values are taken at the depth LongBench runs at."""
    outcome: dict = {}
    finished = _thread.allocate_lock()
    finished.acquire()

    def start() -> None:
        try:
            outcome["value"] = function(*args)
        finally:
            finished.release()

    _thread.start_new_thread(start, ())
    finished.acquire()
    return outcome["value"]


def _eval_py(checkout: Path, tasks: dict[str, list], longbench_e: bool) -> dict:
    """Run ``eval.py --model frozen`` (with ``--e`` for LongBench-E) as a script on the cases, in a
    copy of ``LongBench/`` (it writes its ``result.json`` beside the predictions), and read what it
    wrote."""
    folder = "pred_e" if longbench_e else "pred"
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(shutil.copytree(checkout / "LongBench", Path(tmp) / "LongBench"))
        (copy / folder / "frozen").mkdir(parents=True)
        for task, rows in tasks.items():
            fields = ("pred", "answers", "all_classes", "length")
            lines = "".join(json.dumps({k: r[k] for k in fields}, ensure_ascii=False) + "\n" for r in rows)
            (copy / folder / "frozen" / f"{task}.jsonl").write_text(lines, encoding="utf-8")
        command = [sys.executable, "eval.py", "--model", "frozen"] + (["--e"] if longbench_e else [])
        subprocess.run(command, cwd=copy, check=True, capture_output=True)
        return json.loads((copy / folder / "frozen" / "result.json").read_text(encoding="utf-8"))


def _v1_values(checkout: Path, cases: list) -> dict:
    tasks: dict[str, list] = {}
    for case in cases:
        tasks.setdefault(case["task"], []).append(case)
    values = {"v1_task": _eval_py(checkout, tasks, False), "v1_task_e": _eval_py(checkout, tasks, True)}
    sys.path.insert(0, str(checkout / "LongBench"))
    scoring = importlib.import_module("eval")
    scoring.round = lambda value, digits: value  # one sample, unrounded: 100 * its score
    values["v1_sample"] = [
        _as_from_eval_main(scoring.scorer, c["task"], [c["pred"]], [c["answers"]], c["all_classes"])
        for c in cases
    ]
    return values


def _stub_client_modules() -> None:
    for name, attributes in _CLIENT_MODULES.items():
        try:
            importlib.import_module(name)
        except ImportError:
            stub = types.ModuleType(name)
            for attribute in attributes:
                setattr(stub, attribute, object)
            sys.modules[name] = stub


def _v2_module(checkout: Path):
    _stub_client_modules()
    here = os.getcwd()
    os.chdir(checkout)  # pred.py reads its config and prompt files by relative path when imported
    try:
        spec = importlib.util.spec_from_file_location("longbench_v2_pred", checkout / "pred.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.chdir(here)
    return module


def _result_table(checkout: Path, files: dict[str, list]) -> dict:
    """Write each list of records as a result file and read back the table ``result.py`` writes."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "results").mkdir()
        for name, records in files.items():
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            (Path(tmp) / "results" / f"{name}.jsonl").write_text(lines, encoding="utf-8")
        os.chdir(tmp)
        try:
            runpy.run_path(str(checkout / "result.py"))
            table = (Path(tmp) / "result.txt").read_text(encoding="utf-8").splitlines()
        finally:
            os.chdir(here)
    header = table[0].split("\t")
    return {row.split("\t")[0]: dict(zip(header[1:], row.split("\t")[1:], strict=True)) for row in table[1:]}


def _v2_values(checkout: Path, cases: list) -> dict:
    pred = _v2_module(checkout)
    letters = [pred.extract_answer(c["response"].strip()) for c in cases]
    records = [
        {"pred": letter, "judge": letter == c["answer"], "difficulty": c["difficulty"], "length": c["length"]}
        for c, letter in zip(cases, letters, strict=True)
    ]
    table = _result_table(checkout, {"all": records, "first_twelve": records[:12]})
    return {"letters": letters, "judge": [r["judge"] for r in records], "result": table}


def _published_tables(readme: str) -> dict:
    """Each ``#### Title`` of the README followed by a table, as {title: {row: {column: value}}}."""
    tables: dict[str, dict] = {}
    title, header = None, None
    for line in readme.splitlines():
        if line.startswith("#### "):
            title, header = line[5:].strip(), None
        elif title and line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not set("".join(cells)) <= set("-: "):
                tables.setdefault(title, {})[cells[0]] = dict(zip(header[1:], cells[1:], strict=True))
        elif line.strip() and header is not None:
            title, header = None, None
    return tables


def main(checkout: Path, predictions: Path) -> dict:
    cases = json.loads(predictions.read_text(encoding="utf-8"))
    values: dict = {"longbench_commit": _commit(checkout)}
    values |= _v1_values(checkout, cases["v1"])
    values["v2"] = _v2_values(checkout, cases["v2"])
    readme = (checkout / "LongBench" / "README.md").read_text(encoding="utf-8")
    values["published"] = _published_tables(readme)
    return values


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    data = root / "tests" / "longbench" / "data" / "predictions.json"
    print(json.dumps(main(Path(sys.argv[1]).resolve(), data), indent=1, ensure_ascii=False))
