"""Checks that each function of a module printed by kforge-opt is byte-equal to the same function in another
file (apply-tuned.test: the tuner's kernel.scheduled.mlir). Both must be printed with -mlir-print-local-scope
(no module-wide attribute aliases); visibility is ignored (a dispatch is private in the model, public alone).
Usage: same_functions.py MODULE NAME=FILE..."""

import re
import sys


def functions(text):
    found = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"^(\s*)func\.func (?:private |public )?@([\w$.]+)\(", line)
        if not match:
            continue
        indent, name = match.groups()
        body = [line.replace("func.func private ", "func.func ")]
        for following in lines[i + 1:]:
            body.append(following)
            if following == indent + "}":
                break
        found[name] = "\n".join(body)
    return found


def main():
    module = functions(open(sys.argv[1]).read())
    for pair in sys.argv[2:]:
        name, path = pair.split("=", 1)
        theirs = functions(open(path).read()).get(name)
        ours = module.get(name)
        if theirs is None or ours is None:
            print(f"{name}: missing ({'ours' if ours is None else 'theirs'})")
            return 1
        if ours != theirs:
            print(f"{name}: differs")
            print(ours)
            print("----")
            print(theirs)
            return 1
        print(f"{name}: byte-equal ({len(ours.splitlines())} lines)")
    return 0


sys.exit(main())
