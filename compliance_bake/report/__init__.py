"""The report: its typed models, the board, shadow matrix, snapshot assembly, file layout,
portal, publishing.

Imports targets, signing, identity and inputs; never audit, verify, service or cli.
"""
