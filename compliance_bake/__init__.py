"""compliance-bake: signed, schema-valid snapshots of a regulated-wager compliance service.

Kept import-light on purpose: `compliance-bake --help` imports this package, so nothing heavy
(schemas, templates, ZIP data) may be imported at module level anywhere on that path.
"""

from __future__ import annotations

__version__ = "0.1.0"
