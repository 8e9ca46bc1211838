"""The built-in sample corpus: short stories from a small, fixed world, made by a seeded generator.

Every story has two people of different genders, a place and a few objects. Pronouns always
refer back to someone already named, and because the two people differ in gender each pronoun
has exactly one possible referent ("Mia gave the lamp to Tom. He put it on the shelf."). That
gives attention something concrete to resolve, which the attention views can then show.

The text is plain ASCII. Sizes are prefixes of one stream (``small`` is the first ~100 KB of
``large``), so a model trained on ``small`` has seen the start of ``large``. Nothing is shipped:
the text is generated when first read (0.05 s for ``medium``), and every draw is written out
here from the Mersenne Twister's raw bits (:class:`Draws`), so it cannot change with Python's
version: a test pins each size's sha256 to the files tfstudio once shipped.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

SEED = 20240611
SIZES = {"small": 100_000, "medium": 1_000_000, "large": 5_000_000}  # bytes, at least


class Draws:
    """The draws a story makes, as CPython 3.11 makes them, written out on ``getrandbits``.

    Python guarantees only ``random()``'s sequence across versions; ``choice``, ``shuffle`` and
    ``randint`` may change their algorithms, and with them every user's corpus and the runs
    trained on it. These are those algorithms, on the generator's raw bits."""

    def __init__(self, seed: int):
        self._rng = random.Random(seed)

    def random(self) -> float:
        return self._rng.random()

    def below(self, n: int) -> int:
        """Uniform in 0..n-1: k-bit draws, rejecting those >= n (CPython's _randbelow)."""
        k = n.bit_length()
        r = self._rng.getrandbits(k)
        while r >= n:
            r = self._rng.getrandbits(k)
        return r

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def randint(self, a: int, b: int) -> int:
        return a + self.below(b - a + 1)

    def shuffle(self, x: list) -> None:
        for i in reversed(range(1, len(x))):
            j = self.below(i + 1)
            x[i], x[j] = x[j], x[i]


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


def story(r: Draws) -> str:
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
    r = Draws(seed)
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


@cache
def sample_text(size: str) -> str:
    """The stories of sample size ``size`` (a key of ``SIZES``), generated once per process."""
    return generate_text(SIZES[size])


def main() -> None:
    """Write the stories of the size given (default large) to standard output."""
    import sys
    size = sys.argv[1] if len(sys.argv) > 1 else "large"
    if size not in SIZES:
        print(f"unknown size {size!r}; use one of {', '.join(SIZES)}", file=sys.stderr)
        sys.exit(2)
    sys.stdout.write(sample_text(size))


if __name__ == "__main__":
    main()
