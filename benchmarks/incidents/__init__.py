"""The incident quality benchmark: generated cases of cell traffic drops with known causes.

`generate.generate_cases` writes case directories (see `case.IncidentCase`);
`python -m benchmarks.incidents.generate --out DIR` does it from the shell.
"""
