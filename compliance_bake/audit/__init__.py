"""The deep audit: the 90-day ZIP window over a plays file (spec 2.5), on embedded DuckDB.

`plays` reads a plays file (CSV, JSON Lines, Parquet) into a `plays` relation of text columns;
`zip_window` holds the audit's one SQL query over that relation and a ZIP relation; `report`
turns the result into the snapshot's `deepAudit` block and the detailed report file.
"""
