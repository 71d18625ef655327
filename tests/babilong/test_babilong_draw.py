"""Which bAbI questions a ``generate`` cell asks: a seeded random order, not the file's, the same in
every call and shard and at every length; BABILong's line limit at the length of the same name; and
each sample's story, read from the file by hand here."""

from __future__ import annotations

from collections import Counter

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.babilong.babi import parse_babi
from coca_eval.babilong.draw import draw_order, drawn_questions, line_limit
from coca_eval.babilong.params import make_babilong_params
from coca_eval.methods import make_method

ROOMS = ("kitchen", "office", "garden", "bedroom", "hallway", "bathroom")


def _story(room: str, facts: int, questions: int = 1) -> list[str]:
    """A qa1 story's lines: Mary goes to ``room``, John moves ``facts - 1`` times, then ``questions``
    questions about Mary (each after the facts)."""
    lines = [f"Mary went to the {room}."] + ["John went to the hallway."] * (facts - 1)
    lines += [f"Where is Mary?\t{room}\t1"] * questions
    return [f"{n} {line}" for n, line in enumerate(lines, 1)]


def _file(tmp_path, stories: list[list[str]]) -> str:
    babi = tmp_path / "babi"
    babi.mkdir(exist_ok=True)
    text = "\n".join(line for story in stories for line in story) + "\n"
    (babi / "qa1_single-supporting-fact_test.txt").write_text(text, encoding="utf-8")
    return str(babi)


def test_babilongs_line_limit_at_its_lengths_of_the_same_name():
    """BABILong's (length - 300) // 8 at its 1k, 2k, 4k and 128k (1000 x N tokens), reached here from
    N x 1024 tokens."""
    assert [line_limit(n * 1024) for n in (1, 2, 4, 128)] == [87, 212, 462, 15962]
    assert line_limit(300) == 0  # no room past BABILong's 300 prompt tokens: nothing is kept


def test_the_line_limit_drops_the_questions_over_it_and_keeps_earlier_ones_of_the_same_story():
    """At 1k (87 lines) a question after 86 facts is kept and one after 87 is not, even in the same
    story (BABILong filters each question's slice); at 2k (212 lines) every one is kept."""
    text = "\n".join(
        [
            *_story("kitchen", 10),  # story 0: 11 lines
            "1 Mary went to the office.",  # story 1: a question after 86 facts, one after 87
            *[f"{n} John went to the hallway." for n in range(2, 87)],
            "87 Where is Mary?\toffice\t1",
            "88 John went to the garden.",
            "89 Where is John?\tgarden\t88",
            *_story("bedroom", 120),  # story 2: 121 lines
        ]
    )
    samples = parse_babi(text + "\n")
    assert [(len(s.facts), s.story) for s in samples] == [(10, 0), (86, 1), (87, 1), (120, 2)]
    kept, dropped = drawn_questions(samples, "qa1", 1024, 5)
    assert sorted(kept) == [0, 1] and dropped == 2
    kept, dropped = drawn_questions(samples, "qa1", 2048, 5)
    assert sorted(kept) == [0, 1, 2, 3] and dropped == 0


def test_the_order_is_seeded_and_uniform():
    """One order per seed and task, a permutation; over many seeds each question comes first about as
    often as any other (300 of 2400 draws each; 4.5 standard deviations either side)."""
    assert draw_order(50, "qa1", 7) == draw_order(50, "qa1", 7)
    assert sorted(draw_order(50, "qa1", 7)) == list(range(50))
    assert draw_order(50, "qa1", 7) != draw_order(50, "qa1", 8) != draw_order(50, "qa2", 8)
    first = Counter(draw_order(8, "qa1", seed)[0] for seed in range(2400))
    assert set(first) == set(range(8)) and all(225 <= count <= 375 for count in first.values()), first


def _cells(tmp_path, babi: str, name: str, share=None, **values):
    values = {"tasks": "qa1", "lengths": "1000,1500", "samples": 6, "seed": 11, "babi_data": babi, **values}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    runtime = Runtime() if share is None else Runtime(share=share)
    return evaluate("babilong", [method], make_babilong_params(values), tmp_path / name, runtime).cells


def _asked(cell) -> list[tuple[int, str, int]]:
    """Each sample's (story, answer, facts) in index order."""
    return [(s["story"], s["answers"][0], s["facts"]) for s in cell.detail["samples"]]


@pytest.mark.usefixtures("scripted")
def test_a_cell_asks_questions_in_the_seeded_order_and_records_their_stories(tmp_path):
    """Twelve stories of one question each, story k about ROOMS[k % 6] with k + 1 facts (so story,
    answer and fact count name one another): a cell of six asks six of them, not the file's first six,
    the same at both lengths and in a second run; another seed asks others."""
    stories = [_story(ROOMS[k % 6], k + 1) for k in range(12)]
    babi = _file(tmp_path, stories)
    short, long = _cells(tmp_path, babi, "a.json")
    asked = _asked(short)
    assert all(room == ROOMS[story % 6] and facts == story + 1 for story, room, facts in asked)
    assert len({story for story, _, _ in asked}) == 6
    assert [story for story, _, _ in asked] != list(range(6))
    assert _asked(long) == asked
    assert [_asked(c) for c in _cells(tmp_path, babi, "b.json")] == [asked, asked]
    (other,) = _cells(tmp_path, babi, "c.json", seed=12, lengths="1000")
    assert _asked(other) != asked


@pytest.mark.usefixtures("scripted")
def test_questions_of_one_story_are_spread_over_the_draw(tmp_path):
    """Eight stories of five questions: the file's first six questions come from two stories; a
    random draw of six from 40 has fewer than four stories with probability about 7 %, and this seed's
    draw has more."""
    babi = _file(tmp_path, [_story(ROOMS[k % 6], 3, questions=5) for k in range(8)])
    (cell,) = _cells(tmp_path, babi, "a.json", lengths="1000")
    stories = [story for story, _, _ in _asked(cell)]
    assert len(set(stories)) >= 4, stories


@pytest.mark.usefixtures("scripted")
def test_every_shard_asks_the_questions_the_whole_run_asks(tmp_path):
    """Each of two shards builds every sample and answers its own half: sample i of a cell asks the
    same story's question in its shard as in the unsplit run."""
    from coca_eval.distributed.partition import parse_shard
    from coca_eval.distributed.share import ShardShare

    babi = _file(tmp_path, [_story(ROOMS[k % 6], k + 1) for k in range(12)])
    whole = {
        (c.length, s["index"]): s["story"]
        for c in _cells(tmp_path, babi, "w.json")
        for s in c.detail["samples"]
    }
    parts = {}
    for k in (1, 2):
        share = ShardShare(parse_shard(f"{k}/2"))
        for cell in _cells(tmp_path, babi, f"s{k}.json", share=share):
            parts.update({(cell.length, s["index"]): s["story"] for s in cell.detail["parts"].values()})
    assert parts == whole and len(whole) == 12
