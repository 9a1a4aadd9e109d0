"""The command line: a thin click skin over the core. Only this package imports click or rich.

The top layer: may import every part; no part imports it.
"""
