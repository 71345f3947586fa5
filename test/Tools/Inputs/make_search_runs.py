"""Made-up kforge-tune run directories for test/Tools/summarize-search.test: python3 make_search_runs.py DIR."""
import json
import os
import sys


def run(root, name, payload, policy, times):
    directory = os.path.join(root, name)
    os.makedirs(directory)
    with open(os.path.join(directory, "run.json"), "w") as f:
        json.dump({"payload": payload, "policy": policy}, f)
    with open(os.path.join(directory, "db.jsonl"), "w") as f:
        f.write(json.dumps({"kind": "baseline", "status": "correct", "time_ms": 80.0}) + "\n")
        for t in times:
            f.write(json.dumps({"kind": "candidate", "status": "correct" if t else "too-slow", "time_ms": t}) + "\n")


root = sys.argv[1]
run(root, "gemm-evolve", "x/gemm.mlir", "heuristic+evolve", [10.0] * 5 + [3.0] * 195 + [2.9] * 800)
run(root, "gemm-random", "x/gemm.mlir", "random", [None] * 100 + [6.0] * 100)
run(root, "softmax-evolve", "x/softmax.mlir", "heuristic+evolve", [1.0] * 200 + [0.5] * 800)
run(root, "softmax-random", "x/softmax.mlir", "random", [0.4] * 50)
run(root, "rowsum-evolve", "x/rowsum.mlir", "heuristic+evolve", [0.0700] * 1000)
run(root, "rowsum-random", "x/rowsum.mlir", "random", [0.0705] * 200)
