"""The gradient-norm picture's caption names each variant's line style and the floor the log
axis draws tiny gradients at (no 'gradient of 0' for a 1e-9 that is not 0)."""
from __future__ import annotations

from tfstudio.gui.report_plots import FLOOR, draw_report


def test_caption_names_every_variants_line_and_the_floor(tmp_path):
    norms = {name: {"layers.0": [(1, 1.0), (2, 7.8e-10)], "layers.1": [(1, 2.0), (2, 1.0)]}
             for name in ("norm=pre", "norm=post", "norm=post-in-residual")}
    data = {"positions": {}, "grad_norms": norms, "curves": {}, "params": [],
            "baselines": {}, "train_length": 64}
    pictures = draw_report(tmp_path, data, norms=True)
    caption = next(c for c, path in pictures.items() if path == "plots/grad_norms.png")
    assert ("solid: norm=pre, dashed: norm=post, dotted: norm=post-in-residual" in caption)
    assert f"below {FLOOR:g}" in caption and "gradient of 0" not in caption
    assert (tmp_path / "plots" / "grad_norms.png").stat().st_size > 5_000
