"""Runs inside the peers' environment (`.venv-peers`, lab/system/peers.py), never imported
by whytree: RCAEval's BARO and N-Sigma, its own published code, on one case.

    .venv-peers/bin/python -I lab/system/run_peers.py DATA_CSV INJECT_TIME METHOD...

The case is prepared as RCAEval's main.py prepares a dataset's case before calling a
method: `_latency-50` columns dropped, infinities as missing, missing values carried
forward then 0, `_latency-90` renamed `_latency`; the method is called as main.py calls it
(the injection time, a dataset name, no anomaly indices, `dk_select_useful=False`). The
dataset name only switches RCAEval's preprocessing on (drop_time, drop_constant,
convert_mem_mb: the same for every named dataset); Online Boutique's is given.

Prints one JSON object: {"rcaeval": version, METHOD: {"ranks": [...]} or {"error": ...}}.
Only the standard library is imported at the top: whytree's linters read this file, and
its packages live in the other environment.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
import warnings
from typing import Any

#: The RCAEval names of the methods this script runs.
METHODS = {"baro": "RCAEval.e2e.baro", "nsigma": "RCAEval.e2e"}
DATASET = "re2-ob"
#: DATA_CSV, INJECT_TIME and at least one method.
_ARGS = 3


def prepared(path: str) -> Any:
    pd = importlib.import_module("pandas")
    np = importlib.import_module("numpy")
    data = pd.read_csv(path)
    data = data.loc[:, ~data.columns.str.endswith("_latency-50")]
    data = data.replace([np.inf, -np.inf], np.nan)
    data = data.ffill().fillna(0)
    return data.rename(columns={c: c.replace("_latency-90", "_latency") for c in data.columns})


def run(path: str, inject_time: int, methods: list[str]) -> dict[str, Any]:
    warnings.filterwarnings("ignore")
    out: dict[str, Any] = {"rcaeval": importlib.metadata.version("RCAEval")}
    data = prepared(path)
    for method in methods:
        if method not in METHODS:
            out[method] = {"error": f"not one of {sorted(METHODS)}"}
            continue
        try:
            func = getattr(importlib.import_module(METHODS[method]), method)
            result = func(
                data,
                inject_time,
                dataset=DATASET,
                anomalies=None,
                dk_select_useful=False,
                verbose=False,
                n_iter=len(data.columns) - 1,
            )
            out[method] = {"ranks": [str(r) for r in result["ranks"]]}
        except Exception as e:  # a peer's failure is reported, never raised
            out[method] = {"error": f"{type(e).__name__}: {e}"}
    return out


def main(argv: list[str]) -> int:
    if len(argv) < _ARGS:
        sys.stderr.write(__doc__ or "")
        return 2
    sys.stdout.write(json.dumps(run(argv[0], int(float(argv[1])), argv[2:])) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
