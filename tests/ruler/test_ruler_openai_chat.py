"""RULER through ``--backend openai`` with a chat template: each prompt goes to ``/chat/completions``
as a user message and an assistant turn opened with RULER's answer prefix, and the server's rendering
of them must be the prompt's own tokens. The loopback server (``tests/backends/fake_chat.py``) renders
chats as vLLM does and answers the values planted in the prompt it rendered."""

import json

import pytest
from transformers import AutoTokenizer

from coca_eval.cli import main
from tests.backends.fake_chat import FakeChatServer
from tests.ruler.conftest import SIMPLE_TEMPLATE

TASKS = "niah_single_1,vt"


@pytest.fixture
def chat_model(tiny_chat_dir):
    """The tiny model (its tokenizer adds no BOS) with a chat template of its own."""
    return tiny_chat_dir


@pytest.fixture
def built(ruler_builds) -> list:
    """Every RULER sample the run builds, in order."""
    return ruler_builds


def _cli(capsys, *args) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
        raise SystemExit(0)
    return exit_info.value.code, capsys.readouterr().err


def _ruler(capsys, model, url, output, *extra) -> tuple[int, str]:
    run = ("--tasks", TASKS, "--lengths", "1000", "--samples", "2", "--output", str(output))
    return _cli(
        capsys, "ruler", "--model", str(model), "--backend", "openai", "--base-url", url, *run, *extra
    )


def test_chat_messages_carry_the_exact_prompt_and_score_as_planted(capsys, chat_model, built, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(chat_model)
    planted = lambda ids: next(s.answers for s in built if s.ids == ids)  # noqa: E731  (the server's ids)
    server = FakeChatServer(tokenizer, "tiny", lambda ids: " " + " ".join(planted(ids)))
    with server as url:
        code, err = _ruler(capsys, chat_model, url, tmp_path / "r.json")
    assert code == 0, err
    run = json.loads((tmp_path / "r.json").read_text())
    assert [(c["dataset"], c["value"]) for c in run["cells"]] == [("niah_single_1", 100.0), ("vt", 100.0)]
    assert all(
        c["detail"]["chat_completions"] and c["detail"]["chat_template"] != "none" for c in run["cells"]
    )
    sent = [(b["messages"][0]["content"], b["messages"][1]["content"]) for b in server.bodies]
    expected = [(_text(tokenizer, s.ids[slice(*s.text_span)]), s.answer_prefix) for s in built]
    assert sorted(sent) == sorted(expected) and len(sent) == 4
    assert {s.answer_prefix.split(" ")[0] for s in built} == {"The", "Answer:"}  # RULER's, no leading space
    for body in server.bodies:
        assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
        assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
        assert body["temperature"] == 0 and body["max_tokens"] in (128, 30)
        assert not body["messages"][0]["content"].startswith("### ")  # the template's parts stay out


def test_an_empty_answer_scores_zero(capsys, chat_model, built, tmp_path):
    server = FakeChatServer(AutoTokenizer.from_pretrained(chat_model), "tiny", lambda ids: "")
    with server as url:
        code, err = _ruler(capsys, chat_model, url, tmp_path / "r.json")
    assert code == 0, err
    assert [c["value"] for c in json.loads((tmp_path / "r.json").read_text())["cells"]] == [0.0, 0.0]


@pytest.mark.parametrize("report_ids", [True, False])
def test_a_server_rendering_another_prompt_is_one_line(capsys, chat_model, built, tmp_path, report_ids):
    """A server whose template differs from --model's (here: one line more per turn) renders other
    tokens than the prompt's N: refused with its ids, or with usage.prompt_tokens without them."""
    other = AutoTokenizer.from_pretrained(chat_model)
    other.chat_template = SIMPLE_TEMPLATE.replace("### {{ m['role'] }}:", "### {{ m['role'] }}:\n")
    server = FakeChatServer(other, "tiny", lambda ids: " 1", report_ids=report_ids)
    with server as url:
        code, err = _ruler(capsys, chat_model, url, tmp_path / "r.json")
    last = err.strip().splitlines()[-1]
    assert code == 2 and "Traceback" not in err, err
    assert (
        last.startswith(f"coca-eval: error: server {url} rendered the chat as ")
        and "of --model's chat" in last
    )


def _text(tokenizer, ids) -> str:
    return tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def test_a_rendering_of_the_same_length_but_other_tokens_is_refused():
    """The server's prompt ids are compared token for token, not by count: one token changed in the
    middle is named by its place."""
    from coca_eval.backends.openai_chat import check_rendered
    from coca_eval.backends.openai_replies import ChatCompletion
    from coca_eval.chat import ChatPrompt
    from coca_eval.errors import CocaEvalError

    prompt = ChatPrompt("hello", "", (5, 6, 7, 8))
    same = ChatCompletion(choices=[], prompt_token_ids=[5, 6, 7, 8])
    check_rendered(same, prompt, "http://server/v1")
    other = ChatCompletion(choices=[], prompt_token_ids=[5, 6, 9, 8])
    with pytest.raises(
        CocaEvalError, match="rendered the chat as 4 tokens, differing from the 4 .* from token 2"
    ):
        check_rendered(other, prompt, "http://server/v1")


def test_an_answer_with_a_non_finite_log_prob_is_an_error_cell_as_with_completions(
    capsys, chat_model, built, tmp_path
):
    """Chat requests ask for the answer tokens' log-probs and check them as completions do: an answer
    from non-finite logits is an error cell naming the token, never a scored answer."""
    tokenizer = AutoTokenizer.from_pretrained(chat_model)
    planted = lambda ids: next(s.answers for s in built if s.ids == ids)  # noqa: E731
    server = FakeChatServer(tokenizer, "tiny", lambda ids: " " + " ".join(planted(ids)), logprob=float("nan"))
    with server as url:
        code, err = _ruler(capsys, chat_model, url, tmp_path / "r.json")
    assert code == 2 and "Traceback" not in err, err
    cells = json.loads((tmp_path / "r.json").read_text())["cells"]
    assert [c["status"] for c in cells] == ["error", "error"]
    assert all("answer token 1 has log-prob nan" in c["detail"]["error"] for c in cells)
    assert all(body["logprobs"] is True for body in server.bodies)
