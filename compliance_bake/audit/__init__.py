"""The deep audit: the 90-day ZIP window over plays (spec 2.5), on embedded DuckDB or on Spark.

Imports inputs, signing (the window's label) and report.publish; never verify, service or cli.
`sql` holds the query, once for every engine, with its dialect table; `engines/` runs it behind one
interface (`duckdb`, `spark`, each with its `*_plays` relation and `*_progress` bar);
`zip_window` runs an audit on an engine. The plays, engine-neutral: `plays_source` says where
they are (files, folders, globs, URIs), their format and columns; `plays_input` gives an engine
its file (standard input spooled, a copy without records past the limit); `record_count` counts
the records and `accounting` holds the engine to the count; `play_lines` finds the lines of
violating plays. `violations` names the reasons; `result` is an audit's result (`ZipWindowResult`);
`report` builds the block and the report; `run` is `audit deep`.
"""
