"""The deep audit: the 90-day ZIP window over a plays file (spec 2.5), on embedded DuckDB.

Imports inputs, signing (the window's label) and report.publish; never verify, service or cli.
`plays` reads a plays file as a `plays` relation of text columns; `zip_window` holds the query;
`violations` names the reasons; `report` builds the block and the report; `run` is `audit deep`.
"""
