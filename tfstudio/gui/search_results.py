"""What search-to-add lists for a query, in order (no Qt): the settings the query names
exactly first ("rope": Set the model's positions to RoPE, so Enter applies it), then the
blocks best first, and the settings the query only starts right after the best block.
gui/search_popup.py shows these rows and what the row under the cursor says."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..graph.schema import BlockSpec
from .fuzzy import rank_blocks
from .layer_switches import SettingHit, matching_settings

NO_MATCH = "No block matches; try a word like attention, norm or ffn."
SETTING_HINT = "Changes this setting (one undo step); Enter or a double-click applies it."


@dataclass(frozen=True)
class SearchResult:
    """One row: a block to add (``spec``) or a switch to set (``setting``: key, value)."""

    text: str
    hint: str
    spec: BlockSpec | None = None
    setting: tuple[str, str] | None = None

    @property
    def block_type(self) -> str | None:
        return self.spec.type if self.spec is not None else None


def _setting_row(hit: SettingHit) -> SearchResult:
    return SearchResult("⚙ " + hit.text, SETTING_HINT, setting=(hit.key, hit.value))


def search_results(query: str, specs: Iterable[BlockSpec], layer: str | None,
                   settings: bool = True) -> list[SearchResult]:
    """The rows for ``query`` among ``specs``; a layer's settings only when there is a layer
    (named ``layer``) to set, and none at all without ``settings`` (a loose wire wants a
    block)."""
    hits = matching_settings(query, layer) if settings else []
    rows = [_setting_row(hit) for hit in hits if hit.exact]
    after_block = len(rows) + 1
    rows += [SearchResult(spec.title, spec.description, spec=spec)
             for spec in rank_blocks(query, specs)]
    rows[after_block:after_block] = [_setting_row(hit) for hit in hits if not hit.exact]
    return rows


def palette_enter(settings: list[SettingHit], shown: list[str],
                  scores: dict[str, float]) -> SettingHit | str | None:
    """What Enter in the palette's search field does: apply a setting the query names exactly
    ("rope"), else add the best of the ``shown`` block types by their ``scores``
    (fuzzy.palette_matches); None when nothing is shown."""
    exact = [h for h in settings if h.exact]
    if exact:
        return exact[0]
    return max(shown, key=lambda t: scores.get(t, 0.0)) if shown else None
