"""`compliance-bake diff OLD NEW`: what changed between two signed snapshots.

Layered above verify: `sides` loads and authenticates each side, `compare` lists the changes
keyed by meaning (state and partner, feature, check id, node id), `render` turns the result into
text, Markdown or JSON. No click, no rich: the CLI is a thin skin over `run_diff`.
"""
