"""Numbers as a person writes them: "1,2,3" (seeds for the lesson command and Compare in the
app; seeds and eval lengths for ``tfstudio compare``)."""
from __future__ import annotations


def read_numbers(text: str, name: str) -> list[int]:
    """The whole numbers of ``text`` (empty parts skipped); ValueError naming ``name`` and the
    form it takes."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{name} takes comma-separated whole numbers such as 1,2,3; got "
                         f"'{text}'") from None


def read_seeds(text: str, name: str = "--seeds") -> list[int]:
    """The distinct whole numbers of ``text``; ValueError naming ``name``, the problem and the
    fix (a repeated seed measures nothing twice; none leaves nothing to train)."""
    seeds = read_numbers(text, name)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"{name} needs distinct seeds such as 1,2,3; got '{text}'")
    return seeds
