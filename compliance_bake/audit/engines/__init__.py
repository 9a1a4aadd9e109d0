"""Audit engines: the ZIP window's SQL run by embedded DuckDB, inside PostgreSQL, or on Spark.

Each engine sits behind `interface.AuditEngine`: it loads the reference relations, makes the
`plays` relation from a source and runs the shared query (audit/sql.py) with parameters.
`open_engine` picks one by name; `chosen` names the default for a source (docs/engines.md:
PostgreSQL's plays are audited in their server, everything else on DuckDB); Spark is imported
only when asked for.
"""

from __future__ import annotations

from dataclasses import replace

from compliance_bake.audit.engines.interface import AUTO, AuditEngine, EngineOptions


def chosen(options: EngineOptions, plays: str) -> EngineOptions:
    """The options with the engine named: `auto` is `postgres` for a `postgresql://` source
    (the audit runs where the plays are), else `duckdb`."""
    if options.engine != AUTO:
        return options
    from compliance_bake.audit.engines.postgres import is_postgres

    return replace(options, engine="postgres" if is_postgres(plays) else "duckdb")


def open_engine(options: EngineOptions) -> AuditEngine:
    """A ready engine (its session open), or InputError when the engine cannot run here."""
    if options.engine == "spark":
        from compliance_bake.audit.engines.spark import SparkEngine

        return SparkEngine.open(options)
    if options.engine == "postgres":
        from compliance_bake.audit.engines.postgres import PostgresEngine

        return PostgresEngine()
    from compliance_bake.audit.engines.duckdb import DuckDBEngine

    return DuckDBEngine()


__all__ = ["AuditEngine", "EngineOptions", "chosen", "open_engine"]
