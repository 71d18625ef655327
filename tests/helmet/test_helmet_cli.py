"""``coca-eval helmet`` in-process on the scripted backend: its tables, ``coca-eval tasks``' listing,
and bad input as one line, exit 2."""

import json

import pytest

from tests.ruler.test_ruler_cli import _cli

pytestmark = pytest.mark.usefixtures("scripted")

RUN = ("helmet", "--model", "zoo-rope", "--backend", "scripted", "--samples", "2")


def test_prints_tasks_with_category_averages_and_the_category_summary(capsys, tmp_path):
    out_file = tmp_path / "h.json"
    code, out, err = _cli(capsys, *RUN, "--lengths", "1k,1500", "--output", str(out_file))
    assert code == 0, err
    tasks = ("json_kv", "ruler_niah_mk_2", "ruler_niah_mk_3", "ruler_niah_mv", "Recall average")
    for text in (*tasks, "HELMET category averages by length", "Effective (95 % bound)", "protocol exact"):
        assert text in out, text
    saved = json.loads(out_file.read_text())
    assert saved["config"]["effective_length"]["share"] == 85
    assert all(c["value"] == 100.0 for c in saved["cells"])


def test_a_length_below_the_fixed_parts_is_an_error_cell_and_one_line(capsys, tmp_path):
    out_file = tmp_path / "h.json"
    code, out, err = _cli(
        capsys, *RUN, "--tasks", "json_kv", "--lengths", "150,1k", "--output", str(out_file)
    )
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("coca-eval: error: json_kv @ 150: length 150")
    cells = json.loads(out_file.read_text())["cells"]
    assert [c["status"] for c in sorted(cells, key=lambda c: c["length"])] == ["error", "ok"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--tasks", "kilt_nq9"), "unknown HELMET task 'kilt_nq9'"),
        (("--tasks", ","), "--tasks names no HELMET task"),
        (("--protocol", "lm-eval"), "Invalid value for '--protocol'"),
        (("--share", "0"), "--share must be a percentage in (0, 100]"),
        (("--samples", "auto", "--max-samples", "50"), "--samples auto needs --target-width"),
        (("--data", "/no/such/dir"), "--data /no/such/dir: no such file or directory"),
        (("--haystack", "/no/such/books"), "--haystack /no/such/books: no such file or directory"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, args, message):
    code, out, err = _cli(capsys, "helmet", *args)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_tasks_lists_every_helmet_task_with_its_category_and_data(capsys):
    from coca_eval.helmet.tasks import HELMET_TASKS

    code, out, err = _cli(capsys, "tasks", "helmet")
    assert code == 0 and "helmet --tasks" in out and "ruler --tasks" not in out
    listed = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 4}
    for name in HELMET_TASKS.names():
        task = HELMET_TASKS.get(name)
        assert name in listed and task.category in listed[name], name


def test_samples_helmet_takes_each_tasks_count_from_helmets_configs(capsys, tmp_path):
    out_file = tmp_path / "h.json"
    code, out, err = _cli(capsys, *RUN[:5], "--samples", "helmet", "--tasks", "json_kv", "--lengths", "1k",
                          "--output", str(out_file))  # fmt: skip
    assert code == 0, err
    (cell,) = json.loads(out_file.read_text())["cells"]
    assert cell["n"] == 100 and "HELMET's sample count per task" in " ".join(out.split())
    code, out, err = _cli(capsys, "helmet", "--samples", "helmet", "--max-samples", "5")
    assert code == 2 and "--max-samples and --target-width only apply with --samples auto" in err
    code, out, err = _cli(capsys, "helmet", "--samples", "many")
    assert code == 2 and "'many' is neither a whole number nor auto nor helmet" in err


def test_samples_auto_stops_at_the_target_width_and_records_the_samples_spent(capsys, tmp_path):
    out_file = tmp_path / "h.json"
    auto = ("--samples", "auto", "--max-samples", "30", "--target-width", "60")
    code, out, err = _cli(capsys, *RUN[:5], *auto, "--tasks", "json_kv", "--lengths", "1k",
                          "--output", str(out_file))  # fmt: skip
    assert code == 0, err
    (cell,) = json.loads(out_file.read_text())["cells"]
    assert cell["n"] == cell["detail"]["sequential"]["samples_spent"] < 30
