"""The deep audit: the 90-day ZIP window over a plays file (spec 2.5), on embedded DuckDB.

`plays` reads a plays file (CSV, JSON Lines, Parquet) as a `plays` relation of text columns;
`zip_window` holds the audit's one SQL query over that relation and a ZIP relation, and runs it;
`violations` names the reasons; `report` turns the result into the snapshot's `deepAudit` block,
the summary and the detailed report; `run` is `audit deep` end to end; `reading` follows the
reading of the file for the progress bar. No click or rich here.
"""
