#!/usr/bin/env python3
"""Plants forged code and data in a run directory's caches, and reports whether any of it was used
(test/Tune/cache-planting.test).

usage:
  plant_cache.py library CACHE_DIR LIBRARY
      replaces the shared object of every entry CACHE_DIR/<hash>/ by LIBRARY (a hand-populated cache)
  plant_cache.py seeds SEED_CACHE_DIR
      rewrites every seedN.outputs.2.f32 of a y = x @ w + 1 run (64x64) as x @ w + 2, computed from the cached
      inputs: the reference's outputs as a planted candidate (x @ w + 2) would want them
  plant_cache.py check RUN_DIR LIBRARY
      which of the run's libraries (baseline/, best/, candidates/N/) are LIBRARY, byte for byte, and the
      statuses the database gives the trials built from it
  plant_cache.py used DIR LIBRARY
      whether DIR's kernel.so is LIBRARY
"""
import array
import glob
import json
import os
import shutil
import sys


def same(path, library):
    return os.path.isfile(path) and open(path, "rb").read() == open(library, "rb").read()


def plant_library(cache, library):
    entries = [d for d in glob.glob(os.path.join(cache, "*")) if os.path.isdir(d)]
    for entry in entries:
        for so in glob.glob(os.path.join(entry, "*.so")):
            shutil.copyfile(library, so)
    print("planted entries: %d" % len(entries))


def read_floats(path):
    values = array.array("f")
    with open(path, "rb") as f:
        values.frombytes(f.read())
    return values


def plant_seeds(cache):
    planted = 0
    for outputs in glob.glob(os.path.join(cache, "*", "seed*.outputs.2.f32")):
        stem = outputs[: -len("outputs.2.f32")]
        x, w = read_floats(stem + "inputs.0.f32"), read_floats(stem + "inputs.1.f32")
        n = 64
        y = array.array("f", [0.0] * (n * n))
        for i in range(n):
            row = x[i * n:(i + 1) * n]
            for j in range(n):
                y[i * n + j] = sum(row[k] * w[k * n + j] for k in range(n)) + 2.0
        with open(outputs, "wb") as f:
            f.write(y.tobytes())
        planted += 1
    print("planted seed outputs: %d" % planted)


def check(run, library):
    print("baseline is the planted library: %s" % same(os.path.join(run, "baseline", "kernel.so"), library))
    print("best is the planted library: %s" % same(os.path.join(run, "best", "kernel.so"), library))
    records = [json.loads(line) for line in open(os.path.join(run, "db.jsonl")) if line.strip()]
    planted = [r for r in records if r.get("kind") == "candidate" and
               same(os.path.join(run, "candidates", str(r["id"]), "kernel.so"), library)]
    print("trials built from the planted library: %d (%s)" % (len(planted), ", ".join(
        "%d %s" % (r["id"], r["status"]) for r in planted) or "none"))
    correct = [r for r in records if r.get("kind") == "candidate" and r.get("status") == "correct"]
    print("trials judged correct: %d of %d" % (len(correct), len([r for r in records if r.get("kind") == "candidate"])))


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "library":
        plant_library(*args)
    elif mode == "seeds":
        plant_seeds(*args)
    elif mode == "check":
        check(*args)
    elif mode == "used":
        print("planted library used: %s" % same(os.path.join(args[0], "kernel.so"), args[1]))
    else:
        raise SystemExit(__doc__)
