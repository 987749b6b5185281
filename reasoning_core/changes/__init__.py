"""The change scan: what else moved when a symptom started, found in the data without a model.

`neighbourhood` picks the targets worth looking at (the subject's own and every target on
the same host), `score` measures each series' change of the incident window against the
baseline before it (median and MAD, the onset, the direction), `counters` says which
series are scored as rates, `components` names the component a series belongs to, and
`scan` runs the bounded queries and ranks the components by how strongly and how early
they changed relative to the symptom's onset.
"""
