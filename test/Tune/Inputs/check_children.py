"""Summarises Inputs/env_spy.py's log: which children ran, and which inherited a key variable or a key's value.
Every child counts, the payload analysis (kforge-compile --facts-json, before the LLM policy exists) included:
the key variable is hidden from children as soon as the options are read."""
import json
import sys

children = [json.loads(line) for line in open(sys.argv[1])]
trial = children
print("trial children: %s" % sorted({c["tool"] for c in trial}))
print("OPENAI_API_KEY or ANTHROPIC_API_KEY inherited by: %s"
      % [c["tool"] for c in children if set(c["inherited"]) - {"KFORGE_TEST_LLM_KEY"}])
print("--llm-key-env variable inherited by a trial child: %s" % [c["tool"] for c in trial if c["inherited"]])
print("a key's value inherited by a trial child: %s" % [c["tool"] for c in trial if c["secret_value"]])
