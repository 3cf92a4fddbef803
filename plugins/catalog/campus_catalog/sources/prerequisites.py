"""Banner's prerequisite table (``getSectionPrerequisites``) as the catalog's prerequisite tree.

Banner renders the rule as rows of a table: a connector (``And``/``Or``, empty on the first
row), an opening parenthesis, a test and its score *or* a subject and a course number, a level,
a minimum grade, a closing parenthesis. The subject is its *name* ("Computer Science"), not its
code, so names are matched to the catalog's subjects. The tree has the shape
``Course.prerequisites`` documents: ``{"op": "and"|"or", "items": [...]}`` with leaves
``{"course": "COMP 1000", "min_grade": "C"}`` or ``{"test": "...", "min_score": "..."}``.

Without parentheses, And binds tighter than Or, as in the Banner rule editor's evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any


class _Rows(HTMLParser):
    """The cells of each body row of the first prerequisite table."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self.rows.append(self._row)
            self._row = None
        elif tag == "tbody":
            self._in_body = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@dataclass(frozen=True)
class _Token:
    kind: str  # "and", "or", "(", ")", "leaf"
    leaf: dict[str, Any] | None = None


class UnreadablePrerequisites(ValueError):
    pass


def _tokens(rows: list[list[str]], subject_codes: Mapping[str, str]) -> list[_Token]:
    tokens: list[_Token] = []
    for index, cells in enumerate(rows):
        if len(cells) < 9:
            raise UnreadablePrerequisites(f"row {index + 1} has {len(cells)} cells, not 9")
        connector, opening, test, score, subject, number, _level, grade, closing = cells[:9]
        if index and connector.lower() in ("and", "or"):
            tokens.append(_Token(connector.lower()))
        tokens.extend(_Token("(") for _ in opening if _ == "(")
        if test:
            leaf: dict[str, Any] = {"test": test}
            if score:
                leaf["min_score"] = score
        elif subject and number:
            code = subject_codes.get(subject.lower())
            if code is None:
                raise UnreadablePrerequisites(f"subject {subject!r} is not a subject of the catalog")
            leaf = {"course": f"{code} {number}"}
            if grade:
                leaf["min_grade"] = grade
        else:
            raise UnreadablePrerequisites(f"row {index + 1} names neither a test nor a course")
        tokens.append(_Token("leaf", leaf))
        tokens.extend(_Token(")") for _ in closing if _ == ")")
    return tokens


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at].kind if self.at < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def either(self) -> dict[str, Any]:
        items = [self.both()]
        while self.peek() == "or":
            self.take()
            items.append(self.both())
        return _group("or", items)

    def both(self) -> dict[str, Any]:
        items = [self.one()]
        while self.peek() == "and":
            self.take()
            items.append(self.one())
        return _group("and", items)

    def one(self) -> dict[str, Any]:
        token = self.take() if self.peek() is not None else None
        if token is None:
            raise UnreadablePrerequisites("the rule ends where a course or a test was expected")
        if token.kind == "(":
            inner = self.either()
            if self.peek() != ")":
                raise UnreadablePrerequisites("a parenthesis is not closed")
            self.take()
            return inner
        if token.kind == "leaf" and token.leaf is not None:
            return token.leaf
        raise UnreadablePrerequisites(f"unexpected {token.kind!r}")


def _group(op: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    if len(items) == 1:
        return items[0]
    flat: list[dict[str, Any]] = []
    for item in items:  # (a and b) and c is a and b and c
        flat.extend(item["items"] if item.get("op") == op else [item])
    return {"op": op, "items": flat}


def parse_prerequisites(fragment: str, subject_codes: Mapping[str, str]) -> dict[str, Any] | None:
    """The tree, or None when Banner lists no prerequisite. Raises UnreadablePrerequisites."""
    parser = _Rows()
    parser.feed(fragment)
    parser.close()
    if not parser.rows:
        return None
    tokens = _tokens(parser.rows, {name.lower(): code for name, code in subject_codes.items()})
    reader = _Parser(tokens)
    tree = reader.either()
    if reader.peek() is not None:
        raise UnreadablePrerequisites(f"unexpected {reader.peek()!r} after the rule")
    return tree
