"""What a search by meaning says when it found little: the ``note`` of a page of sections or courses.

A page with nothing on it reads to a model as "the campus has no such course", and it tells the
student so (issue 37). So a search by meaning that is not sure says why, in words a model can
repeat: its nearest courses when none is close (``semantic.question_floor``), or, when none is
even near, the courses whose titles have the student's words, searched instead, and what to try
when those are none either.
"""

from __future__ import annotations

from campus_catalog.semantic import Closeness

# Words of the notes, shared by the sections' and the courses' searches.
_TRY = "Ask again in other words (the topic, a subject, a course title's words), or browse a subject (list_subjects)."


def _quoted(q: str) -> str:
    return " ".join(q.split())


def nearest(q: str, what: str) -> str:
    """The page lists the nearest ``what`` ("sections", "courses"), none of them a close match."""
    return (
        f"No course is a close match for '{_quoted(q)}' by meaning (its title, subject and description "
        f"where the catalog has one); these {what} are the nearest. Check each title before calling it "
        f"what the student asked for. {_TRY}"
    )


def by_title_words(q: str, what: str, found: int) -> str:
    """Nothing was near by meaning, so the page is a search of title words: ``found`` ``what``."""
    if found:
        return (
            f"No course is near '{_quoted(q)}' by meaning, so these {what} are those whose course titles "
            f"have its words (a search by words, not by meaning). {_TRY}"
        )
    return (
        f"No course is near '{_quoted(q)}' by meaning, and no course title has its words: the catalog may "
        f"not teach it, or name it otherwise. {_TRY}"
    )


def of_meaning(q: str, closeness: Closeness, what: str) -> str | None:
    """The note of a page found by meaning (None when its best match is close)."""
    return nearest(q, what) if closeness == "nearest" else None
