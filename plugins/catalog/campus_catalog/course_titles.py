"""A course's title as a student reads it, for the text a search by meaning embeds.

Registrars write things into titles that are not what a course is about, and real Banner imports
carry them as they are (``../shared/fixtures``): Thompson Rivers University appends its contact
hours (``Operating Systems (3,1,0)``, ``Kayak 2 (60 hours)``, ``Cell Biology (3,1*,3*)``, a lab
mark ``(L)``), marks topics courses with asterisks (``***Current Topics in Computer Science``),
and Texas A&M writes every title in capitals (``INTRO TO COMPUTER SYSTEM``). The model reads a
title in capitals as other words than the same title in mixed case, and the digits as part of the
topic: on TRU's term "operating systems, processes and memory" ranked a psychology course about
memory above Operating Systems (bench/search_in_students_words.py, docs/performance.md). The stored
title is left as the campus wrote it; only the embedded text is plain.
"""

from __future__ import annotations

import re

# (3,1,0), (3,1*,3*), (0,2,14P), (4,0,0,13), (1.5,1.5,0): lecture, seminar, lab hours a week.
_HOURS = r"\((?:\s*\d+(?:\.\d+)?\*?[A-Z]?\s*,)+\s*\d+(?:\.\d+)?\*?[A-Z]?\s*\)"
# (60 hours), (30 hours/week), (5 weeks), (L): a length or a lab mark.
_LENGTH = r"\(\s*\d+\s*(?:hours?|weeks?)(?:\s*/\s*week)?\s*\)|\(L\)"
_NOTATION = re.compile(rf"(?:{_HOURS}|{_LENGTH})")
# What is left between or after two removed notations: "(3,0,0) or (5,0,0)".
_DANGLING_OR = re.compile(r"(?:\s+or)+\s*$|^\s*or\s+", re.IGNORECASE)


def plain_title(title: str) -> str:
    """``title`` without contact hours, lengths, lab marks and leading asterisks, and in mixed
    case when it was all capitals; the title itself when nothing would be left."""
    plain = _NOTATION.sub(" ", title)
    plain = " ".join(plain.split())
    plain = _DANGLING_OR.sub("", plain).strip().lstrip("*").strip()
    if not plain:
        return " ".join(title.split())
    if plain.upper() == plain and any(c.isalpha() for c in plain):
        plain = _mixed_case(plain)
    return plain


def _mixed_case(capitals: str) -> str:
    """``INTRO TO COMPUTER SYSTEM`` as ``Intro To Computer System``, ``HNR-RESEARCH`` as
    ``Hnr-Research``; a word with a digit in it (``2X1``) stays as it is."""
    return " ".join(
        word if any(c.isdigit() for c in word) else _WORD.sub(_capital, word) for word in capitals.split(" ")
    )


_WORD = re.compile(r"[^\W\d_]+")


def _capital(found: re.Match[str]) -> str:
    return found.group().capitalize()
