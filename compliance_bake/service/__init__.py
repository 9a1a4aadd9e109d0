"""The compliance service (`compliance-bake serve`): the engine and a baked `out/` over HTTP."""
