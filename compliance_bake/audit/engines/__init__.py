"""Audit engines: the ZIP window's SQL run by embedded DuckDB, inside PostgreSQL, or on Spark.

Each engine sits behind `interface.AuditEngine`: it loads the reference relations, makes the
`plays` relation from a source and runs the shared query (audit/sql.py) with parameters.
`open_engine` picks one by name (DuckDB unless the operator names another: docs/engines.md says
when each pays); Spark is imported only when asked for.
"""

from __future__ import annotations

from compliance_bake.audit.engines.interface import AuditEngine, EngineOptions


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


__all__ = ["AuditEngine", "EngineOptions", "open_engine"]
