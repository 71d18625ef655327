"""``--shard K/N`` and the slice it names: every unit is owned by exactly one shard."""

import pytest

from coca_eval.distributed.partition import Partition, parse_shard
from coca_eval.errors import CocaEvalError


def test_slices_cover_every_unit_once():
    for count in (1, 2, 3, 8):
        owners = {unit: [k for k in range(count) if Partition(k, count).owns(unit)] for unit in range(23)}
        assert all(len(found) == 1 for found in owners.values())
        assert sorted(u for k in range(count) for u in Partition(k, count).owned(23)) == list(range(23))


def test_shard_text_is_one_based():
    assert parse_shard("2/3") == Partition(1, 3) and parse_shard(" 3 / 3 ") == Partition(2, 3)
    assert parse_shard("2/3").label == "2/3" and Partition(1, 3).owned(8) == [1, 4, 7]
    assert Partition(1, 3).owner_of(5) == Partition(2, 3)


@pytest.mark.parametrize("text", ["0/3", "4/3", "x/y", "1/0", "2", "-1/3", "1/3/4", ""])
def test_malformed_shard_is_a_one_line_error(text):
    with pytest.raises(CocaEvalError) as caught:
        parse_shard(text)
    assert "--shard" in str(caught.value) and "\n" not in str(caught.value)


def test_partition_refuses_a_slice_outside_its_count():
    with pytest.raises(ValueError):
        Partition(3, 3)
