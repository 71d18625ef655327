"""RULER prompts: exactly N minus the task's answer budget tokens (RULER's N: prompt + answer = N) for
every task, length and tokenizer, with and without a chat template, and exactly N under
``--length-counts prompt``; holding what the task plants the number of times it plants it; same seed,
same prompts."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from coca_eval.chat import chat_frame
from coca_eval.errors import CocaEvalError
from coca_eval.ruler.params import make_ruler_params
from coca_eval.ruler.prompts import RulerPromptBuilder
from coca_eval.ruler.scoring import score_sample
from coca_eval.ruler.tasks import NOISE_TEXT, RULER_TASKS, RulerTask

# Both of cwe's settings (below and from 4096 tokens). The zoo's 512-token vocabulary spends about 2.5
# times the tokens of the real ones on the same text, so its lengths are longer.
LENGTHS = {"zoo": (2048, 3000, 8192), "smollm2": (1024, 2048, 4096), "gemma3": (1024, 2048, 4096)}
SAMPLES = 2
ALL_TASKS = RULER_TASKS.names()


def encoder(tokenizer):
    return lambda text: tokenizer(text, add_special_tokens=False).input_ids


def make_builder(tokenizer, chat: str = "none", **kwargs) -> RulerPromptBuilder:
    adds_bos = tokenizer("a").input_ids[0] == tokenizer.bos_token_id
    frame = chat_frame(chat, tokenizer)
    return RulerPromptBuilder(
        encoder(tokenizer), tokenizer.bos_token_id if adds_bos else None, frame, **kwargs
    )


def decoded(tokenizer, ids) -> str:
    return tokenizer.decode(ids, skip_special_tokens=True)


def check_niah(task: RulerTask, text: str, sample) -> None:
    needle = re.compile(rf"One of the special magic {task.value_type} for (.+?) is: ([\w-]+)\.")
    planted = needle.findall(text)
    if task.haystack != "needle":  # the needle haystack is made of other needles
        assert len(planted) == task.needles
    for answer in sample.answers:
        assert [v for _, v in planted].count(answer) == 1 and text.count(answer) == 1
    assert len(sample.detail["depths"]) == len(sample.answers)
    assert sample.detail["haystack"] in ("noise", "needle") or task.haystack == "essay"


def check_vt(task: RulerTask, text: str, sample) -> None:
    assert text.count("Memorize and track the chain(s)") == 2  # the worked example, then the task
    main = text[text.rindex("Memorize and track") :]
    value = re.search(r"assigned the value (\d+) in the text above", main).group(1)
    names = sample.answers
    assert len(names) == task.hops + 1 and len(set(names)) == len(names)
    assert main.count(f"VAR {names[0]} = {value}") == 1
    for a, b in zip(names, names[1:], strict=False):
        assert main.count(f"VAR {b} = VAR {a} ") == 1
    assert len(re.findall(r"VAR [A-Z]{5} = ", main)) == task.chains * (task.hops + 1)
    assert sample.detail["depths"] == sorted(sample.detail["depths"])


def check_cwe(task: RulerTask, text: str, sample) -> None:
    assert text.count("Below is a numbered list of words") == 2  # the worked example, then the task
    listed = text[text.rindex("Below is a numbered list") :].split("\n")[1]
    items = re.split(r"(?:^| )\d+\. ", re.sub(r" \d+\.?$", "", listed.rstrip()))[
        1:
    ]  # the list may end mid-item
    assert re.match(r"1\. ", listed)
    counts = Counter(items)
    repeats, once = sample.detail["repeats"]
    assert len(sample.answers) == task.common_words
    assert all(counts[w] == repeats for w in sample.answers)
    assert max(c for w, c in counts.items() if w not in sample.answers) <= once
    assert len(counts) >= sample.detail["distinct_words"]


def check_fwe(task: RulerTask, text: str, sample) -> None:
    coded = text[text.index("coded words. ") + len("coded words. ") : text.rindex("\nQuestion:")]
    counts = Counter(coded.split())
    expected = sample.detail["counts"]
    assert [counts[w] for w in sample.answers] == expected and expected == sorted(expected, reverse=True)
    others = [c for w, c in counts.items() if w not in sample.answers and not w.startswith(".")]
    assert max(others) < expected[-1]
    assert counts["..."] > expected[0]


def check_qa(task: RulerTask, text: str, sample) -> None:
    numbers = [int(n) for n in re.findall(r"Document (\d+):\n", text)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= sample.detail["documents"]
    assert text.count("Question: ") == 1 and text.rstrip().endswith("Answer:")
    gold = 1 if task.dataset == "squad" else 4  # the test files' gold documents per question
    assert len(sample.detail["depths"]) == gold
    assert all(text.count(answer) >= 1 for answer in sample.answers[:1])
    assert sample.detail["haystack"].startswith(("SQuAD v2 (", "HotpotQA ("))


CHECKS = {"niah": check_niah, "vt": check_vt, "cwe": check_cwe, "fwe": check_fwe, "qa": check_qa}


def check_prompt(tokenizer, builder, task: RulerTask, length: int, sample) -> None:
    assert len(sample.ids) == length
    text = decoded(tokenizer, sample.ids)
    answer_prefix = task.wording(task.answer_prefix).split("{")[0].strip()
    assert answer_prefix in text[-300:]
    if builder.chat is not None:  # head first, the tail right before the answer prefix opens the answer
        head, tail = builder.chat.head, builder.chat.tail
        assert sample.ids[: len(head)] == head and sample.ids.count(head[-1]) >= 1
        after_tail = _last_index(sample.ids, tail) + len(tail)
        assert decoded(tokenizer, sample.ids[after_tail:]).strip().startswith(answer_prefix)
        user = decoded(tokenizer, sample.ids[len(head) : after_tail - len(tail)])
        assert user.rstrip().endswith(("?", "."))  # the question closes the user turn
    if tokenizer.bos_token_id is not None and tokenizer("a").input_ids[0] == tokenizer.bos_token_id:
        assert sample.ids[0] == tokenizer.bos_token_id and sample.ids[1] != tokenizer.bos_token_id
    CHECKS[task.family](task, text, sample)


def _last_index(ids: list[int], part: list[int]) -> int:
    return next(i for i in range(len(ids) - len(part), -1, -1) if ids[i : i + len(part)] == part)


CHAT = {"zoo": "simple", "smollm2": "auto", "gemma3": "gemma"}  # SmolLM2-Instruct brings its own


def chat_option(tokenizer_name: str, templates) -> str:
    return "auto" if CHAT[tokenizer_name] == "auto" else str(templates[CHAT[tokenizer_name]])


@pytest.mark.parametrize("chat", [False, True], ids=["base", "chat"])
@pytest.mark.parametrize("task_name", ALL_TASKS)
def test_exact_length_prompts_hold_what_the_task_plants(
    ruler_tokenizer, tokenizer_name, task_name, chat, chat_templates, qa_dir
):
    tokenizer = ruler_tokenizer(tokenizer_name)
    task = RULER_TASKS.get(task_name)
    option = chat_option(tokenizer_name, chat_templates) if chat else "none"
    builder = make_builder(tokenizer, option, qa_data=str(qa_dir))
    assert (builder.chat is not None) == chat
    rulers = make_ruler_params({"tasks": task_name})
    for length in LENGTHS[tokenizer_name]:
        prompt_length = rulers.prompt_length(length, task_name)
        assert prompt_length == length - task.answer_budget
        samples = builder.build(task_name, length, SAMPLES, seed=3, prompt_length=prompt_length)
        assert [s.index for s in samples] == list(range(SAMPLES))
        for sample in samples:
            check_prompt(tokenizer, builder, task, prompt_length, sample)
            for other in samples:  # any two samples agree on the shorter of their shared prefixes
                shared = min(sample.shared_prefix, other.shared_prefix)
                assert other.ids[:shared] == sample.ids[:shared]
            assert score_sample(task, " ".join(sample.answers), sample.answers)["score"] == 1.0
            assert score_sample(task, "", sample.answers)["score"] == 0.0


def test_same_seed_same_prompts_other_seeds_and_lengths_differ(ruler_tokenizer):
    builder = make_builder(ruler_tokenizer("zoo"))
    first = builder.build("niah_single_1", 1024, 3, seed=5)
    assert first == make_builder(ruler_tokenizer("zoo")).build("niah_single_1", 1024, 3, seed=5)
    assert [s.answers for s in builder.build("niah_single_1", 1024, 3, seed=6)] != [s.answers for s in first]
    assert [s.answers for s in builder.build("niah_single_1", 2048, 3, seed=5)] != [s.answers for s in first]
    assert len({s.answers for s in first}) == 3


def test_noise_haystack_is_shared_before_the_first_needle(ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    samples = make_builder(tokenizer).build("niah_single_1", 2048, 4, seed=0)
    noise = set(re.findall(r"[^.]+\.", NOISE_TEXT))
    for sample in samples:
        text = decoded(tokenizer, sample.ids[: sample.shared_prefix])
        haystack = text.split("afterwards.\n", 1)[1]
        sentences = re.findall(r"[^.]+\.", haystack)  # whole noise sentences, the last maybe cut
        assert all(s.strip() in {n.strip() for n in noise} for s in sentences[:-1])
        assert len(sentences) > 5  # the needle sits past the first noise line at these depths
        assert decoded(tokenizer, sample.ids[: sample.shared_prefix + 12]).count("One of the special") == 1
    by_depth = sorted(samples, key=lambda s: s.detail["depths"][0])
    assert [s.shared_prefix for s in by_depth] == sorted(s.shared_prefix for s in samples)  # deeper, longer
    shortest = min(s.shared_prefix for s in samples)
    assert all(s.ids[:shortest] == samples[0].ids[:shortest] for s in samples)  # one cache serves all
    depths = [s.detail["depths"][0] for s in samples]
    assert all(0 <= d <= 1 for d in depths) and len(set(depths)) == 4


def test_a_length_shorter_than_the_fixed_parts_is_refused_with_the_reason(ruler_tokenizer, chat_templates):
    chat = make_builder(ruler_tokenizer("zoo"), str(chat_templates["simple"]))
    with pytest.raises(CocaEvalError, match=r"answer prefix and chat template take \d+ tokens; the context"):
        chat.build("niah_single_1", 100, 1, seed=0)
    builder = make_builder(ruler_tokenizer("zoo"))
    with pytest.raises(
        CocaEvalError, match=r"length 60 is too short for RULER task niah_single_1: .* take \d+"
    ):
        builder.build("niah_single_1", 60, 1, seed=0)
    with pytest.raises(
        CocaEvalError, match=r"niah_multivalue: .*4 needle\(s\) and one haystack token: \d+ more needed"
    ):
        builder.build("niah_multivalue", 200, 1, seed=0)


def test_essay_haystack_defaults_to_the_books_and_takes_a_file_or_directory(ruler_tokenizer, tmp_path):
    tokenizer = ruler_tokenizer("zoo")
    books = make_builder(tokenizer).build("niah_single_2", 2048, 1, seed=0)[0]
    assert books.detail["haystack"] == "books" and "Alice" in decoded(tokenizer, books.ids)
    prose = "The ship sailed at dawn. Nobody saw it leave! Was it ever seen again? The harbour kept quiet. "
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.txt").write_text(prose * 40, encoding="utf-8")
    (tmp_path / "dir" / "skip.md").write_text("Not read.", encoding="utf-8")
    for path in (tmp_path / "dir" / "a.txt", tmp_path / "dir"):
        sample = make_builder(tokenizer, haystack=str(path)).build("niah_single_2", 2048, 1, seed=0)[0]
        text = decoded(tokenizer, sample.ids)
        assert sample.detail["haystack"].startswith(f"{path} (sha256 ")
        assert "Nobody saw it leave! Was it ever seen again?" in text and "Not read" not in text
        assert len(sample.ids) == 2048 and text.count(sample.answers[0]) == 1


def test_a_haystack_path_without_text_is_refused(ruler_tokenizer, tmp_path):
    tokenizer = ruler_tokenizer("zoo")
    (tmp_path / "empty.txt").write_text(" \n\n ", encoding="utf-8")
    (tmp_path / "nodocs").mkdir()
    for path, reason in (
        (tmp_path / "empty.txt", "has no text"),
        (tmp_path / "nodocs", "has no text"),
        (tmp_path / "missing", "haystack not found"),
    ):
        with pytest.raises(CocaEvalError, match=reason):
            make_builder(tokenizer, haystack=str(path)).build("niah_single_2", 2048, 1, seed=0)
    # tasks that do not read the essay haystack never look at it
    assert make_builder(tokenizer, haystack=str(tmp_path / "missing")).build("niah_single_1", 2048, 1, 0)


@pytest.mark.realmodel
@pytest.mark.parametrize(
    ("task", "length", "reason"),
    [
        ("vt", 400, "take \\d+ tokens; the context: 1 more needed"),
        ("cwe", 600, "take \\d+ tokens; 10 common words x 6: \\d+ more needed"),
        ("fwe", 150, "coded words whose top three are clear: \\d+ more needed"),
    ],
)
def test_too_short_for_each_family_says_what_does_not_fit(ruler_tokenizer, task, length, reason):
    with pytest.raises(
        CocaEvalError, match=f"length {length} is too short for RULER task {task}: .*{reason}"
    ):
        make_builder(ruler_tokenizer("smollm2")).build(task, length, 1, seed=0)


@pytest.mark.parametrize("chat", [False, True], ids=["base", "chat"])
def test_text_span_and_answer_prefix_for_text_apis(ruler_tokenizer, chat_templates, chat):
    tokenizer = ruler_tokenizer("zoo")
    builder = make_builder(tokenizer, str(chat_templates["simple"]) if chat else "none")
    sample = builder.build("niah_single_1", 2048, 1, seed=0)[0]
    start, end = sample.text_span
    text = decoded(tokenizer, sample.ids[start:end])
    assert text.startswith("A special magic number is hidden")
    query = re.search(r"special magic number for (\S+) mentioned", text).group(1)
    prefix = f"The special magic number for {query} mentioned in the provided text is"
    assert sample.answer_prefix == (prefix if chat else " " + prefix)  # RULER appends it after a space
    if chat:
        assert text.endswith("mentioned in the provided text?") and start == len(builder.chat.head)
        assert decoded(tokenizer, sample.ids[end:]) == "\n### assistant:\n" + sample.answer_prefix
    else:
        assert (start, end) == (0, 2048) and text.endswith("provided text?" + sample.answer_prefix)


def test_check_sources_fails_fast_on_what_the_tasks_would_read(tmp_path, qa_dir):
    from coca_eval.ruler.prompts import check_sources

    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    with pytest.raises(CocaEvalError, match="has no text"):
        check_sources(["niah_single_1", "niah_single_2"], str(tmp_path / "empty.txt"))
    with pytest.raises(CocaEvalError, match="QA data not found"):
        check_sources(["qa_2"], qa_data=str(tmp_path / "none"))
    check_sources(["niah_single_1", "vt"], str(tmp_path / "empty.txt"), str(tmp_path / "none"))  # not read
    check_sources(["qa_1", "qa_2"], qa_data=str(qa_dir))


@pytest.mark.parametrize("task_name", ALL_TASKS)
def test_the_prompt_alone_is_n_under_length_counts_prompt(ruler_tokenizer, task_name, qa_dir):
    """The earlier meaning, kept behind ``--length-counts prompt``: the same draws (needles, words,
    questions), and a prompt of exactly N tokens."""
    tokenizer = ruler_tokenizer("smollm2")
    builder = make_builder(tokenizer, qa_data=str(qa_dir))
    params = make_ruler_params({"tasks": task_name, "length_counts": "prompt"})
    assert params.prompt_length(2048, task_name) == 2048
    whole = builder.build(
        task_name, 2048, SAMPLES, seed=3, prompt_length=params.prompt_length(2048, task_name)
    )
    ruler = builder.build(
        task_name, 2048, SAMPLES, seed=3, prompt_length=2048 - RULER_TASKS.get(task_name).answer_budget
    )
    for sample in whole:
        check_prompt(tokenizer, builder, RULER_TASKS.get(task_name), 2048, sample)
    assert [s.answers for s in whole] == [s.answers for s in ruler]


def test_vts_worked_example_is_followed_by_a_blank_line_as_in_ruler(ruler_tokenizer):
    """RULER's variable_tracking.py (c3f5e3b) ends the worked example with a newline and inserts it
    followed by another: the task's instruction starts after a blank line."""
    tokenizer = ruler_tokenizer("smollm2")
    (sample,) = make_builder(tokenizer).build("vt", 2048, 1, seed=0, prompt_length=2048 - 30)
    text = decoded(tokenizer, sample.ids)
    second = text.index("Memorize and track the chain(s)", text.index("Memorize and track the chain(s)") + 1)
    assert text[second - 2 : second] == "\n\n" and text[second - 3] != "\n"


def test_a_big_haystack_says_what_it_is_reading(tmp_path, monkeypatch, capsys):
    """A haystack of gigabytes takes minutes to read and split: one line says so before the wait
    (the threshold lowered here so a small file stands for a big one); a small one reads silently."""
    from coca_eval.generation import haystacks

    (tmp_path / "big").mkdir()
    for name in ("a.txt", "b.txt"):
        (tmp_path / "big" / name).write_text("The ship sailed at dawn. " * 40, encoding="utf-8")
    haystacks.load_essay(str(tmp_path / "big" / "a.txt"))
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(haystacks, "BIG_HAYSTACK_BYTES", 1000)
    haystacks.load_essay(str(tmp_path / "big"))
    err = capsys.readouterr().err
    expected = (
        f"coca-eval: reading the haystack {tmp_path / 'big'} (2 files, 0 MB) and splitting it into sentences"
    )
    assert err == expected + "\n"
