#!/usr/bin/env python3
"""Writes the native sample's test data (schema/src/native_sample.rs) from a probe of the real
client: `observe.py probe harness/matrix/native-claude-code.json --claude BIN --mcpscope BIN
--out PROBE.json`, then `make-native-sample.py PROBE.json`. Keeps seven scenarios: the sub-matrix
(native-matrix.json, the real matrix's scenarios verbatim) and per run what the client printed,
fired and requested, and mcpscope's inventory of the tree (native-probe.json). With `--all` it
keeps every scenario (153 runs, ~2 MB: for checking the whole matrix by hand with
`cargo test -p scopebox-schema native_observe`, never committed)."""
import json, os, sys

KEEP = ["baseline-stdio-all-scopes", "baseline-http-all-scopes", "get-unknown-name",
        "precedence-project-user", "project-disabled-user-local", "managed-exclusive",
        "malformed-project-bom"]
here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
matrix = json.load(open(os.path.join(repo, "harness/matrix/native-claude-code.json")))
if "--all" in sys.argv:
    KEEP = [s["id"] for s in matrix["scenarios"]]
matrix["scenarios"] = [s for s in matrix["scenarios"] if s["id"] in KEEP]
with open(os.path.join(here, "native-matrix.json"), "w") as f:
    json.dump(matrix, f, indent=1, ensure_ascii=False)
    f.write("\n")
probe = json.load(open(sys.argv[1]))
out = []
for r in probe["results"]:
    if r["scenario"] not in KEEP:
        continue
    rec = r["records"][0]
    out.append({"scenario": r["scenario"], "mode": r["mode"], "exitCode": rec["exitCode"],
                "seconds": rec["seconds"], "stdout": rec["stdout"], "stderr": rec["stderr"],
                "sentinel": rec["sentinel"], "http": rec["http"], "inventory": rec["inventory"]})
with open(os.path.join(here, "native-probe.json"), "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
print("%d scenarios, %d runs" % (len(matrix["scenarios"]), len(out)))
