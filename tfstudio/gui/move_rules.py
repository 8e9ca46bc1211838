"""Which blocks a drag moved (no Qt): those drawn more than half a canvas unit (summed across
and down) from where the graph has them; the others are left out of the Move command, so a
click that jiggles a block makes no undo step. scene.commit_moves asks it."""
from __future__ import annotations

from typing import Mapping

STILL_WITHIN = 0.5  # canvas units, |dx| + |dy|


def moved_blocks(drawn: Mapping[str, tuple[float, float]],
                 placed: Mapping[str, tuple[float, float]]) -> list[str]:
    """The ids, in ``drawn``'s order, of the blocks drawn away from where ``placed`` has them
    (blocks ``placed`` does not know are left out)."""
    return [nid for nid, (x, y) in drawn.items() if nid in placed
            and abs(x - placed[nid][0]) + abs(y - placed[nid][1]) > STILL_WITHIN]
