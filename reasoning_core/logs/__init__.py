"""Log lines as evidence: masking what must never be shown, the log check that counts a
pattern in the incident window against the baseline, and "what is new in the logs"."""
