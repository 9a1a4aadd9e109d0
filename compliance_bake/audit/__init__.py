"""The deep audit: the 90-day ZIP window over plays (spec 2.5), on embedded DuckDB or on Spark.

Imports inputs, signing (the window's label) and report.publish; never verify, service or cli.
`sql` holds the query, once for every engine, with its dialect table; `engines/` runs it (DuckDB,
Spark) behind one interface and reads the plays once; `zip_window` runs an audit on an engine;
`plays` and `sources` read the plays (DuckDB's relation; files, folders, globs, URIs); `intake`
gives an engine its file (standard input spooled, a copy without records past the limit);
`record_count` counts the records and `accounting` holds the engine to the count; `violations` names
the reasons; `report` builds the block and the report; `run` is `audit deep`.
"""
