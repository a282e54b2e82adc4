"""triage: one screen for a multi-process server that has gone silent."""

__version__ = "0.1.0"
