#!/usr/bin/env python3
"""Count the PTX instructions of a kernel's main loop: the loop around the first instruction matching PATTERN
(default: wgmma.mma_async), from the label its backward branch targets to that branch. A static reading for
comparing kernels' K loops on the CPU (no GPU): it says nothing of latency or stalls.

  scripts/ptx_kloop.py [--pattern REGEX] KERNEL.ptx...
One line per file: the loop's instruction count and its 10 most frequent opcodes; exit 1 when a file has no
such loop."""
import argparse
import re
import sys


def main_loop(lines, pattern):
    first = next((i for i, line in enumerate(lines) if re.search(pattern, line)), None)
    if first is None:
        return None
    for j in range(first, len(lines)):
        branch = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);", lines[j])
        if not branch:
            continue
        label = branch.group(1) + ":"
        if label in lines[:first]:
            return lines[lines.index(label) + 1:j + 1]
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pattern", default=r"wgmma\.mma_async", help="a regex the loop's body contains")
    parser.add_argument("ptx", nargs="+")
    args = parser.parse_args(argv)
    missing = 0
    for path in args.ptx:
        lines = [line.strip() for line in open(path, encoding="utf-8")]
        loop = main_loop(lines, args.pattern)
        if loop is None:
            print(f"{path}: no loop around /{args.pattern}/")
            missing += 1
            continue
        body = [line for line in loop if line and not line.endswith(":") and line[0] not in "/{}"]
        opcodes = {}
        for line in body:
            opcode = line.split()[0].split(".")[0]
            if opcode.startswith("@"):  # a predicated instruction: its opcode follows the guard
                opcode = line.split()[1].split(".")[0]
            opcodes[opcode] = opcodes.get(opcode, 0) + 1
        top = ", ".join(f"{op} {n}" for op, n in sorted(opcodes.items(), key=lambda kv: -kv[1])[:10])
        print(f"{path}: {len(body)} instructions ({top})")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
