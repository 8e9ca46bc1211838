"""Run seeds as a person writes them: "1,2,3" (the lesson command, Compare in the app)."""
from __future__ import annotations


def read_seeds(text: str, name: str = "--seeds") -> list[int]:
    """The distinct whole numbers of ``text``; ValueError naming ``name``, the problem and the
    fix (a repeated seed measures nothing twice; none leaves nothing to train)."""
    try:
        seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{name} takes comma-separated whole numbers such as 1,2,3; got "
                         f"'{text}'") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"{name} needs distinct seeds such as 1,2,3; got '{text}'")
    return seeds
