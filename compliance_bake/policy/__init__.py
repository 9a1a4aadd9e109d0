"""The policy a compliance service of this kind enforces: the typed registry and its decision.

`model.py` holds the registry's facts (licences, limit rows, partner facts), `amounts.py` the
exact money of wagers and limits, `rows.py` the reading of a limit row from a source's columns
(a fixtures file or a database table alike), `decide.py` the pure decision.
"""
