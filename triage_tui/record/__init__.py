"""The incident record: recorder (JSON lines, deltas, size cap), reader, replay source, report export."""
