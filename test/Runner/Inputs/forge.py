#!/usr/bin/env python3
"""Builds a forged-verdict candidate (forged.c) as a kforge artifact.

usage: forge.py MANIFEST_DIR ATTACK OUT_DIR [--gpu] [--cc CC]

MANIFEST_DIR is a real artifact of the signature y = x @ w (+ 1), x: MxK, w: KxN, y: MxN, fp32 (e.g.
kforge-compile test/Runner/Inputs/reference.mlir --target cpu -o DIR); its manifest is copied as is (with
--gpu, its target becomes {"kind": "gpu"} unless it already is a GPU manifest, and the kernel copies through
libcuda) and the library it names is forged.c built with -DATTACK_<ATTACK>. ATTACK is one of the names in
forged.c (CORRECT, FD_EXIT, ...), case-insensitive, '-' for '_'. Also usable as a module: forge(...).
"""
import json
import os
import subprocess
import sys

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "forged.c")
ATTACKS = ["CORRECT", "ZEROS", "PLANTED", "REPLAY", "FD_EXIT", "FD_RETURN", "FD_CORRECT", "FD_CTOR", "KILL_PARENT", "STOP_PARENT", "KILL_ALL",
           "FORGE_REPORT", "WRITE_OUTSIDE", "PLANT_SEED", "PROC_READER", "MITM", "SLOW_FORGED_TIMING"]


def forge(manifest_dir, attack, out_dir, gpu=False, cc="cc", name="kernel"):
    attack = attack.upper().replace("-", "_")
    if attack not in ATTACKS:
        raise SystemExit("forge.py: unknown attack %s (known: %s)" % (attack, ", ".join(ATTACKS)))
    manifest = json.load(open(os.path.join(manifest_dir, name + ".json")))
    shapes = [a["shape"] for a in manifest["arguments"]]
    if len(shapes) != 3 or any(len(s) != 2 for s in shapes) or any(a["dtype"] != "f32" for a in manifest["arguments"]):
        raise SystemExit("forge.py: %s is not a 2-D f32 x @ w -> y artifact" % manifest_dir)
    (m, k), (_, n) = shapes[0], shapes[1]
    if gpu and manifest["target"].get("kind") != "gpu":
        manifest["target"] = {"kind": "gpu"}
    device = manifest["target"].get("kind") == "gpu"
    os.makedirs(out_dir, exist_ok=True)
    library = os.path.join(out_dir, manifest["library"])
    command = [cc, "-shared", "-fPIC", "-O1", "-pthread", "-o", library, SOURCE, "-DATTACK_" + attack,
               "-DM=%d" % m, "-DK=%d" % k, "-DN=%d" % n, "-DENTRY=" + manifest["entry"], "-ldl"]
    if device:
        command.append("-DDEVICE_BUFFERS")
    if attack in ("MITM", "SLOW_FORGED_TIMING"):
        command.append("-Wl,-z,nodelete")  # the thread outlives the candidate's dlclose
    subprocess.run(command, check=True)
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(manifest, f, indent=2)
    return out_dir


if __name__ == "__main__":
    args = sys.argv[1:]
    gpu = "--gpu" in args
    cc = "cc"
    if "--cc" in args:
        cc = args[args.index("--cc") + 1]
        del args[args.index("--cc"):args.index("--cc") + 2]
    args = [a for a in args if a != "--gpu"]
    if len(args) != 3:
        raise SystemExit(__doc__)
    forge(args[0], args[1], args[2], gpu=gpu, cc=cc)
