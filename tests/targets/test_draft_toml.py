"""A drafted profile reads back with tomllib as the document gave it: every text of the document
that reaches a TOML string or key (a path, a header name, a query parameter's name) goes through
the draft's one TOML string writer (`targets/draft._toml`), whatever it holds: quotes,
backslashes, control characters, non-ASCII letters. A lone surrogate, which UTF-8 cannot hold,
is the one text that comes back changed (as U+FFFD) and is left out here."""

from __future__ import annotations

import tomllib
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from compliance_bake.targets.draft import draft_profile

TEXT = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40)
HOSTILE = "a\"b\\c\x00\x1f\x7f\u2028\u202e é \"''' \\u0041 # ] ="


def _document(path: str, header: str, query: str) -> dict[str, Any]:
    check = {"parameters": [{"in": "query", "name": query, "required": True}]}
    return {
        "paths": {path: {"get": check}},
        "components": {
            "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": header}}
        },
    }


@given(TEXT, TEXT, TEXT)
@example(HOSTILE, HOSTILE, HOSTILE)
@example("/check/ключ", "X-Ключ", "état")
def test_every_text_of_the_document_reads_back_as_it_was(
    name: str, header: str, query: str
) -> None:
    path = f"/check/{name}"
    draft = tomllib.loads(draft_profile(_document(path, header, query), "openapi.json"))
    assert draft["check"]["path"] == path
    assert draft["auth"]["header"] == header
    assert draft["check"]["query"] == {query: "TODO"}
    assert draft["check"]["method"] == "GET"
