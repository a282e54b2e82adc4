"""Plain-text renderings of the model (Markdown report, stack text). No textual or rich here."""
