"""Token segments: pieces tokenised as inside running text, streams cut to the token, inserts at
piece boundaries."""

from itertools import cycle

from tiny_models import make_sentencepiece_like_tokenizer, make_tokenizer

from coca_eval.generation.segments import Pieces, Stream, insert, nearest_bound, take


def test_a_piece_reads_as_inside_running_text():
    for tokenizer in (make_tokenizer(add_bos=False), make_sentencepiece_like_tokenizer()):
        encode = lambda t, tok=tokenizer: tok(t, add_special_tokens=False).input_ids  # noqa: E731
        pieces = Pieces(encode)
        whole = encode("the time was upon us")
        assert encode("the time") + pieces.piece(" was upon us") == whole
        assert pieces.piece(" was upon us") is pieces.piece(" was upon us")  # remembered
        assert pieces.fresh(" was") == pieces.piece(" was") and pieces.fresh(" was") is not pieces.fresh(
            " was"
        )


def test_take_cuts_to_the_token_and_keeps_the_boundaries_inside():
    stream = take(cycle([[1, 2, 3], [4, 5]]), 9)
    assert stream.ids == [1, 2, 3, 4, 5, 1, 2, 3, 4]
    assert stream.bounds == [0, 3, 5, 8]


def test_inserts_go_to_the_nearest_boundary_after_the_first_piece_in_the_order_given():
    stream = Stream(list(range(10)), [0, 3, 5, 8, 10])
    ids, starts = insert(stream, [(0.95, [-1]), (0.0, [-2, -2]), (0.55, [-3]), (0.5, [-4])])
    assert ids == [0, 1, 2, -2, -2, 3, 4, -3, -4, 5, 6, 7, 8, 9, -1]
    assert starts == [14, 3, 7, 8]
    assert nearest_bound([0, 3, 5, 8], 4.0) == 3  # a tie goes to the earlier boundary
    assert nearest_bound([0, 3, 5, 8], 0.0, lowest=0) == 0
