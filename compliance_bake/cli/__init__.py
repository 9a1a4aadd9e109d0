"""The command line: a thin click skin over the core. Only this package imports click or rich."""
