"""The JSON Schemas under `schemas/`, loaded through one function that raises a named error.

Reports are validated with jsonschema-rs (a 500,000-row snapshot in about 0.1 s, where the
pure-Python `jsonschema` takes about 26 s); fixtures, which are small and where the quality of the
message matters most, with `jsonschema` and its best-match error.
tests/inputs/test_schemas.py checks that both validators agree on good and broken reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from compliance_bake.errors import SchemaError
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.resources import schemas_dir

SNAPSHOT = "compliance-snapshot.schema.json"
REGISTRY_ENHANCEMENTS = "compliance-enhancements.schema.json"
REGISTRY_SHADOW = "compliance-shadow.schema.json"
LICENCES = "licences.schema.json"
GEO = "geo.schema.json"


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    """The first problem found: where in the document, and what."""

    path: str
    message: str
    keyword: str
    instance: Any = None  # the value found there, for a message in plain words


@lru_cache(maxsize=1)
def load_all() -> dict[str, dict[str, Any]]:
    """Every schema by file name. Raises SchemaError if one is missing or not valid JSON."""
    folder = schemas_dir()
    if not folder.is_dir():
        raise SchemaError(f"schema folder {folder} is missing", "reinstall compliance-bake")
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.schema.json")):
        try:
            out[path.name] = loads_strict(path.read_bytes())
        except (OSError, StrictJSONError) as exc:
            raise SchemaError(
                f"{path}: cannot load schema: {exc}", "reinstall compliance-bake"
            ) from None
    for name in (SNAPSHOT, REGISTRY_ENHANCEMENTS, REGISTRY_SHADOW, LICENCES, GEO):
        if name not in out:
            raise SchemaError(f"{folder / name} is missing", "reinstall compliance-bake")
    return out


def schema(name: str) -> dict[str, Any]:
    return load_all()[name]


def _path_text(parts: list[str | int] | Any) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


@cache
def _fast_validator(name: str) -> Any:
    import jsonschema_rs

    schemas = load_all()
    registry = jsonschema_rs.Registry([(s["$id"], s) for s in schemas.values()])
    return jsonschema_rs.validator_for(schemas[name], registry=registry)


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

    schemas = load_all()
    registry: Registry[Any] = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in schemas.values()
    )
    # 41.0 is an "integer" to JSON Schema; not to us (the parser refuses fractions too).
    whole = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    )
    strict = validators.extend(Draft202012Validator, type_checker=whole)
    return strict(schemas[name], registry=registry)


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
