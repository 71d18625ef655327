"""A depth heat map's title, panel titles and labels lie inside the figure at any number of lengths:
at one length the figure was 2.4 inches wide and its title ran off both edges. Each figure is drawn
and every text's box (matplotlib's own extent, from the renderer) is held inside the figure's box."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from coca_eval.generation.heatmaps import depth_figure

LENGTHS = (1024, 2048, 4096, 8192, 16384, 32768)
DATASETS = ("ruler_niah_mk_2", "json_kv", "kilt_nq", "icl_trec_coarse", "recall_average_long_name")


def _needles(lengths, count: int) -> dict:
    return {
        name: [(n, depth / 10, depth % 3 != 0) for n in lengths for depth in range(10)]
        for name in DATASETS[:count]
    }


def _texts_outside(fig) -> list[str]:
    """Each visible, non-empty text drawn on ``fig`` whose box is not inside the figure's box."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    box = fig.bbox
    outside = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        extent = text.get_window_extent(renderer)
        inside = extent.x0 >= box.x0 - 0.5 and extent.x1 <= box.x1 + 0.5
        inside = inside and extent.y0 >= box.y0 - 0.5 and extent.y1 <= box.y1 + 0.5
        if not inside:
            outside.append(f"{text.get_text()!r} at {extent.bounds} in {box.bounds}")
    return outside


@pytest.mark.parametrize("lengths", [1, 2, 6])
@pytest.mark.parametrize("datasets", [1, 2, 5])
def test_every_title_and_label_lies_inside_the_figure(lengths, datasets):
    fig = depth_figure("zoo-coca-slack (a long method label)", _needles(LENGTHS[:lengths], datasets), 10)
    assert fig._suptitle is not None and fig._suptitle.get_text().startswith("zoo-coca-slack")
    assert _texts_outside(fig) == []


def test_a_wide_figure_keeps_its_width():
    """Six lengths already fit: the figure is as the lengths size it, not widened further."""
    fig = depth_figure("m", _needles(LENGTHS, 1), 10)
    assert fig.get_figwidth() == pytest.approx(1.5 + 0.9 * 6)
