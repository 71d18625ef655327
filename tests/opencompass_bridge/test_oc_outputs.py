"""Reading a finished OpenCompass work directory: cells, n, suites, failed tasks and their logs."""

import pytest
from oc_fixtures import write_outputs

from coca_eval.errors import CocaEvalError
from coca_eval.opencompass.datasets import parse_datasets
from coca_eval.opencompass.outputs import collect_cells, latest_output


def test_results_become_cells_with_question_counts(tmp_path):
    output = write_outputs(
        tmp_path,
        "tiny",
        {"COPA": 60.0, "lukaemon_mmlu_anatomy": 50.0, "lukaemon_mmlu_virology": 25.0},
        {"COPA": 5, "lukaemon_mmlu_anatomy": 4, "lukaemon_mmlu_virology": 2},
    )
    assert latest_output(tmp_path) == output
    datasets = parse_datasets("COPA,MMLU:anatomy,MMLU:virology")
    cells, failures = collect_cells(output, {"tiny": "Tiny LLaMA"}, datasets)
    assert failures == []
    copa, mmlu = cells
    assert (copa.method, copa.dataset, copa.metric, copa.value, copa.n) == (
        "Tiny LLaMA",
        "COPA",
        "accuracy",
        60.0,
        5,
    )
    assert (mmlu.dataset, mmlu.value, mmlu.n) == ("MMLU", 37.5, 6)  # plain mean over subjects
    assert mmlu.detail["subjects"]["lukaemon_mmlu_virology"] == {"accuracy": 25.0, "n": 2}


def test_a_missing_result_is_an_error_cell_with_the_log_line(tmp_path):
    output = write_outputs(tmp_path, "tiny", {"COPA": 60.0}, {"COPA": 5})
    log = output / "logs" / "infer" / "tiny" / "RTE.out"
    log.parent.mkdir(parents=True)
    log.write_text("loading\nTraceback (most recent call last):\n  File x\nValueError: RTE file is broken\n")
    cells, failures = collect_cells(output, {"tiny": "Tiny"}, parse_datasets("COPA,RTE"))
    rte = cells[1]
    assert (rte.status, rte.value, rte.detail["log"]) == ("error", None, str(log))
    (failure,) = failures
    message = failure.message()
    assert "\n" not in message and "ValueError: RTE file is broken" in message and str(log) in message


def test_no_output_at_all_is_a_user_error(tmp_path):
    with pytest.raises(CocaEvalError, match="no output"):
        latest_output(tmp_path)
