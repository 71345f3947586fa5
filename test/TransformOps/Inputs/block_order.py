#!/usr/bin/env python3
"""Evaluates the block renumbering transform.kforge.group_block_order wrote into a gpu.launch (read from stdin:
kforge-opt's output for a launch of constant grid and cluster sizes whose body stores at [block y, block x],
through the renumbering's index arithmetic) for every block of the grid, and prints what it found: whether the
blocks' new places are each place of the grid once, whether each cluster's blocks stay one cluster with their
places in it, and the places of the first blocks the GPU starts (linear order y * gx + x)."""
import re
import sys

text = sys.stdin.read()
constants = {m.group(1): int(m.group(2)) for m in re.finditer(r"(%\w+) = arith\.constant (\d+) : index", text)}
launch = re.search(r"gpu\.launch (?:clusters\((%\w+), (%\w+), %\w+\) in \(%\w+ = (%\w+), %\w+ = (%\w+), %\w+ = %\w+\) )?"
                   r"blocks\((%\w+), (%\w+), %\w+\) in \(%\w+ = (%\w+), %\w+ = (%\w+)", text)
if not launch:
    sys.exit("block_order.py: no gpu.launch with constant grid sizes")
cluster = (constants[launch.group(3)], constants[launch.group(4)]) if launch.group(3) else (1, 1)
bx_name, by_name = launch.group(5), launch.group(6)
gx, gy = constants[launch.group(7)], constants[launch.group(8)]
body = text[launch.end():]
ops = re.findall(r"(%\w+) = arith\.(addi|subi|muli|divui|remui|minui) (%\w+), (%\w+) : index", body)
store = re.search(r"memref\.store %\w+, %\w+\[(%\w+), (%\w+)\]", body)
if not store:
    sys.exit("block_order.py: no memref.store at [y, x] in the launch")
apply = {"addi": lambda a, b: a + b, "subi": lambda a, b: a - b, "muli": lambda a, b: a * b,
         "divui": lambda a, b: a // b, "remui": lambda a, b: a % b, "minui": min}


def place(bx, by):
    env = dict(constants)
    env.update({bx_name: bx, by_name: by, launch.group(7): gx, launch.group(8): gy})
    # The grid's sizes inside the launch are its region arguments (named after `in (`).
    for name, size in re.findall(r"(%\w+) = (%\w+)", launch.group(0)):
        env[name] = env[size]
    for result, op, a, b in ops:
        if a in env and b in env:
            env[result] = apply[op](env[a], env[b])
    return env[store.group(1)], env[store.group(2)]


places = {(bx, by): place(bx, by) for by in range(gy) for bx in range(gx)}
covered = sorted(places.values())
print("grid %dx%d, clusters %dx%d: %s" % (gx, gy, cluster[0], cluster[1],
      "each place once" if covered == sorted((y, x) for y in range(gy) for x in range(gx)) else "NOT a bijection"))
whole = all(places[(bx, by)][1] // cluster[0] == places[(bx - bx % cluster[0], by - by % cluster[1])][1] // cluster[0]
            and places[(bx, by)][0] // cluster[1] == places[(bx - bx % cluster[0], by - by % cluster[1])][0] // cluster[1]
            and places[(bx, by)][1] % cluster[0] == bx % cluster[0]
            and places[(bx, by)][0] % cluster[1] == by % cluster[1]
            for (bx, by) in places)
print("clusters kept whole" if whole else "clusters BROKEN")
order = [places[(p % gx, p // gx)] for p in range(min(12, gx * gy))]
print("first blocks (y, x): " + " ".join("(%d, %d)" % yx for yx in order))
