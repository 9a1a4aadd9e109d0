"""The compliance service (`compliance-bake serve`): the engine and a baked `out/` over HTTP.

Imports targets (the engine), identity, report.layout and inputs; never verify or cli.
"""
