"""The JSON Schemas under `schemas/`, loaded through one function that raises a named error.

Reports are validated with jsonschema-rs (on a large snapshot, hundreds of times faster than the
pure-Python `jsonschema`: docs/benchmarks.md); fixtures, which are small and where the quality of
the message matters most, with `jsonschema` and its best-match error.
tests/inputs/test_schemas.py checks that both validators agree on good and broken reports.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from compliance_bake.errors import SchemaError
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.resources import schemas_dir

SNAPSHOT = "compliance-snapshot.schema.json"
REGISTRY_BOARD = "compliance-enhancements.schema.json"
REGISTRY_SHADOW = "compliance-shadow.schema.json"
LICENCES = "licences.schema.json"
GEO = "geo.schema.json"
LIMITS = "limits.schema.json"
POLICY = "compliance-policy.schema.json"


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    """The first problem found: where in the document, and what."""

    path: str
    message: str
    keyword: str
    instance: Any = None  # the value found there, for a message in plain words


@cache
def _document(name: str) -> dict[str, Any]:
    """One schema, read once. Raises SchemaError if it is missing or not valid JSON."""
    folder = schemas_dir()
    if not folder.is_dir():
        raise SchemaError(f"schema folder {folder} is missing", "reinstall compliance-bake")
    path = folder / name
    try:
        document: dict[str, Any] = loads_strict(path.read_bytes())
    except FileNotFoundError:
        raise SchemaError(f"{path} is missing", "reinstall compliance-bake") from None
    except (OSError, StrictJSONError) as exc:
        raise SchemaError(
            f"{path}: cannot load schema: {exc}", "reinstall compliance-bake"
        ) from None
    return document


def schema(name: str) -> dict[str, Any]:
    return _document(name)


def _references(node: Any) -> Iterator[str]:
    """The schema files a schema's `$ref`s name (the part before `#`; `#...` is the schema
    itself). Every schema's `$id` sits in the same folder, so a relative name is a file name."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and not value.startswith("#"):
                yield value.partition("#")[0]
            else:
                yield from _references(value)
    elif isinstance(node, list):
        for item in node:
            yield from _references(item)


def _with_references(name: str) -> list[str]:
    """The schema and every schema it names, transitively: all a validator of it resolves.
    A fixture's schema names none, so validating fixtures reads two small files."""
    found: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop()
        if current not in found:
            found.append(current)
            todo.extend(_references(_document(current)))
    return found


def _path_text(parts: list[str | int] | Any) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


@cache
def _fast_validator(name: str) -> Any:
    import jsonschema_rs

    documents = [_document(n) for n in _with_references(name)]
    registry = jsonschema_rs.Registry([(d["$id"], d) for d in documents])
    return jsonschema_rs.validator_for(documents[0], registry=registry)


def first_violation(name: str, document: Any) -> SchemaViolation | None:
    """Validate a report document; None when valid."""
    validator = _fast_validator(name)
    for error in validator.iter_errors(document):
        keyword = str(error.schema_path[-1]) if error.schema_path else ""
        return SchemaViolation(
            _path_text(list(error.instance_path)), error.message, keyword, error.instance
        )
    return None


@cache
def _reference_validator(name: str) -> Any:
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource

    documents = [_document(n) for n in _with_references(name)]
    registry: Registry[Any] = Registry().with_resources(
        (d["$id"], Resource.from_contents(d)) for d in documents
    )
    # 41.0 is an "integer" to JSON Schema; not to us (the parser refuses fractions too).
    whole = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    )
    strict = validators.extend(Draft202012Validator, type_checker=whole)
    return strict(documents[0], registry=registry)


def first_violation_reference(name: str, document: Any) -> SchemaViolation | None:
    """Validate with `jsonschema` and its best-match error (fixtures, and tests)."""
    from jsonschema.exceptions import best_match

    error = best_match(_reference_validator(name).iter_errors(document))
    if error is None:
        return None
    return SchemaViolation(
        _path_text(list(error.absolute_path)), error.message, str(error.validator)
    )


def schema_path(name: str) -> Path:
    return schemas_dir() / name
