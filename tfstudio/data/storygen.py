"""The built-in sample corpus: short stories from a small, fixed world, made by a seeded generator.

Every story has two people of different genders, a place and a few objects. Pronouns always
refer back to someone already named, and because the two people differ in gender each pronoun
has exactly one possible referent ("Mia gave the lamp to Tom. He put it on the shelf."). That
gives attention something concrete to resolve, which the attention views can then show.

The text is plain ASCII. Sizes are prefixes of one stream (``small`` is the first ~100 KB of
``large``), so a model trained on ``small`` has seen the start of ``large``. Only the largest is
shipped, ``resources/corpus/stories.txt``; the smaller sizes are cut from it where
``generate_sizes`` cuts them. It is this module's output; regenerate it with
``python -m tfstudio.data.storygen`` (a test checks that doing so gives identical bytes).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

SEED = 20240611
SIZES = {"small": 100_000, "medium": 1_000_000, "large": 5_000_000}  # bytes, at least


@dataclass(frozen=True)
class Person:
    name: str
    gender: str  # "female" or "male"

    @property
    def subject(self) -> str:
        return "she" if self.gender == "female" else "he"

    @property
    def object(self) -> str:
        return "her" if self.gender == "female" else "him"

    @property
    def possessive(self) -> str:
        return "her" if self.gender == "female" else "his"


FEMALE_NAMES = ("Mia", "Anna", "Lucy", "Emma", "Sara", "Lily", "Nora", "Ella", "Ruth", "Jane",
                "Rosa", "Iris", "Ada", "Maya", "Zoe", "Kate", "Lena", "Ivy", "Clara", "Eva")
MALE_NAMES = ("Tom", "Sam", "Ben", "Leo", "Max", "Jack", "Paul", "Finn", "Omar", "Hugo",
              "Noah", "Luke", "Owen", "Adam", "Carl", "Ivan", "Theo", "Eli", "Jon", "Ray")
PEOPLE = tuple(Person(n, "female") for n in FEMALE_NAMES) + tuple(
    Person(n, "male") for n in MALE_NAMES)

PLACES = ("kitchen", "garden", "library", "market", "school", "park", "station", "beach",
          "forest", "bakery", "museum", "harbor", "farm", "river", "castle", "shop")
OBJECTS = ("lamp", "book", "key", "ball", "cup", "map", "kite", "box", "hat", "letter",
           "apple", "coin", "shell", "clock", "basket", "umbrella", "bell", "scarf", "pencil",
           "candle", "jar", "drum", "ring", "rope")
SURFACES = ("shelf", "table", "bench", "chair", "bed", "desk", "windowsill", "floor", "step")
ADJECTIVES = ("red", "old", "small", "shiny", "heavy", "blue", "broken", "new", "green",
              "tiny", "yellow", "strange", "wooden", "lost")
COLORS = ("red", "blue", "green", "yellow", "white")
MOODS = ("happy", "tired", "proud", "glad", "calm", "sleepy", "hungry", "excited")


def _cap(s: str) -> str:
    return s[0].upper() + s[1:]


def _a(phrase: str) -> str:
    """The phrase with its indefinite article ("a red cup", "an old lamp")."""
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


# Each event names its people before any pronoun for them and introduces its object ("a red
# cup") before referring to it ("it", "the cup"). p and q are the two people, in either role.
def _found(r, p, q):
    return (f"{p.name} found {_a(r.choice(ADJECTIVES))} {r.choice(OBJECTS)} near the "
            f"{r.choice(SURFACES)}. {_cap(p.subject)} showed it to {q.name}.")


def _gave(r, p, q):
    o = r.choice(OBJECTS)
    return (f"{p.name} had {_a(r.choice(ADJECTIVES))} {o}. {_cap(p.subject)} gave the {o} to "
            f"{q.name}, and {q.subject} put it on the {r.choice(SURFACES)}.")


def _asked(r, p, q):
    o = r.choice(OBJECTS)
    return (f"{q.name} asked {p.name} for the {o}. {_cap(p.subject)} gave it to {q.object}.")


def _lost(r, p, q):
    o = r.choice(OBJECTS)
    return (f"{p.name} could not find {p.possessive} {o}. {q.name} helped {p.object} look "
            f"under the {r.choice(SURFACES)}, and {q.subject} found it there.")


def _carried(r, p, q):
    o = r.choice(OBJECTS)
    return (f"{p.name} was {r.choice(MOODS)}, so {q.name} carried {p.possessive} {o} for "
            f"{p.object}.")


def _dropped(r, p, q):
    o = r.choice(OBJECTS)
    return (f"{p.name} dropped the {o}. {q.name} picked it up and gave it back to "
            f"{p.object}.")


def _wanted(r, p, q):
    place = r.choice(PLACES)
    return (f"{p.name} wanted to go to the {place}, but {q.name} wanted to stay. In the end "
            f"{p.subject} went to the {place} alone.")


def _painted(r, p, q):
    o = r.choice(OBJECTS)
    return (f"{p.name} painted the {o} {r.choice(COLORS)}. "
            f"{q.name} said that {p.subject} had done a good job.")


def _told(r, p, q):
    return (f"{p.name} told {q.name} about the {r.choice(PLACES)}. {_cap(q.subject)} listened "
            f"and asked {p.object} many questions.")


EVENTS = (_found, _gave, _asked, _lost, _carried, _dropped, _wanted, _painted, _told)


def _opening(r, p, q, place):
    return r.choice((
        f"{p.name} and {q.name} went to the {place}.",
        f"One morning {p.name} met {q.name} at the {place}.",
        f"{p.name} visited {q.name} at the {place}.",
        f"It was a quiet day at the {place}, and {p.name} was there with {q.name}.",
    ))


def _ending(r, p, q):
    return r.choice((
        f"At the end of the day {p.name} went home. {_cap(p.subject)} was {r.choice(MOODS)}.",
        f"{p.name} thanked {q.name}, and {q.subject} smiled.",
        f"Then {p.name} and {q.name} went home together.",
        f"{q.name} waved to {p.name}, and {p.subject} waved back.",
    ))


def story(r: random.Random) -> str:
    """One story (a single paragraph) drawn from ``r``."""
    woman = r.choice(PEOPLE[:len(FEMALE_NAMES)])
    man = r.choice(PEOPLE[len(FEMALE_NAMES):])
    people = [woman, man]
    r.shuffle(people)
    p, q = people
    sentences = [_opening(r, p, q, r.choice(PLACES))]
    for _ in range(r.randint(2, 4)):
        a, b = (p, q) if r.random() < 0.5 else (q, p)
        sentences.append(r.choice(EVENTS)(r, a, b))
    a, b = (p, q) if r.random() < 0.5 else (q, p)
    sentences.append(_ending(r, a, b))
    return " ".join(sentences)


def generate_text(min_bytes: int, seed: int = SEED) -> str:
    """Stories separated by blank lines, up to the first story that reaches ``min_bytes``."""
    r = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < min_bytes:
        parts.append(story(r) + "\n\n")
        total += len(parts[-1])  # ASCII: characters are bytes
    return "".join(parts)


def cut(full: str, min_bytes: int) -> str:
    """The stories of ``full`` up to the first that reaches ``min_bytes`` (all of them if none
    does); stories hold no blank line, so the first one at or after the size ends that story."""
    return full[:full.find("\n\n", min_bytes - 2) + 2] if min_bytes < len(full) else full


def generate_sizes(seed: int = SEED) -> dict[str, str]:
    """The text of every size in ``SIZES``; each is a prefix of the largest (one generation)."""
    full = generate_text(max(SIZES.values()), seed)
    return {size: cut(full, min_bytes) for size, min_bytes in SIZES.items()}


def sample_path() -> Path:
    """The shipped stories: the largest size, which every other size is a prefix of."""
    from .paths import RESOURCE_DIR
    return RESOURCE_DIR / "corpus" / "stories.txt"


def sample_texts() -> dict[str, str]:
    """The shipped stories of every size in ``SIZES``, cut from the shipped file."""
    full = sample_path().read_text(encoding="ascii")
    return {size: cut(full, min_bytes) for size, min_bytes in SIZES.items()}


def main() -> None:
    text = generate_text(max(SIZES.values()))
    path = sample_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("ascii"))
    print(f"{path}: {len(text):,} bytes")


if __name__ == "__main__":
    main()
