"""What the Lessons dock says (no Qt): the course's rows, a picked lesson's page (its claim,
what it varies, how long it takes, the command that runs it) and whether it can be trained
in Compare. gui/lessons_panel.py shows these. Callers hand the lessons in (loading every
lesson module takes ~0.25 s)."""
from __future__ import annotations

import html

EMPTY_HINT = ("Pick a lesson to read its claim. Each re-runs one idea of the story on your "
              "machine and computes whether the claim holds.")


def course_row(number: int, lesson) -> str:
    """The lesson's row in the course list: "3. activations: Gated FFNs ..."."""
    return f"{number}. {lesson.name}: {lesson.title.removeprefix('Lesson: ')}"


def trains_in_compare(lesson) -> bool:
    """A lesson on a schedule of its own is no comparison of variants: Compare cannot
    train it (``tfstudio lesson NAME`` does)."""
    return lesson.run is None


def lesson_page(lesson, minutes: str) -> str:
    """The picked lesson in rich text: title, source, claim, what it varies (or that it
    trains its base and measures it), the time it takes (``minutes``) and its command."""
    e = html.escape
    varies = "; ".join(f"{key} = {', '.join(values)}" for key, values in lesson.varies)
    what = (f"Varies {varies}, {len(lesson.seeds)} seeds each." if varies else
            f"Trains {lesson.base} ({len(lesson.seeds)} seeds), then measures it.")
    return (f"<b>{e(lesson.title)}</b><br>"
            f"<i>{e(lesson.source)}</i>"
            f"<p>Claim: {e(lesson.claim)}</p>"
            f"<p>{e(what)} Estimated time: {e(minutes)}. Run it: "
            f"<code>tfstudio lesson {e(lesson.name)}</code>.</p>")
