"""Summarises Inputs/env_spy.py's log: which children ran, and which inherited a key variable or a key's value.
The payload analysis (kforge-compile --facts-json) runs before the LLM policy exists; "trial" children are the
others (the candidates' compiles and the runner)."""
import json
import sys

children = [json.loads(line) for line in open(sys.argv[1])]
trial = [c for c in children if "--facts-json" not in c["args"]]
print("trial children: %s" % sorted({c["tool"] for c in trial}))
print("OPENAI_API_KEY or ANTHROPIC_API_KEY inherited by: %s"
      % [c["tool"] for c in children if set(c["inherited"]) - {"KFORGE_TEST_LLM_KEY"}])
print("--llm-key-env variable inherited by a trial child: %s" % [c["tool"] for c in trial if c["inherited"]])
print("a key's value inherited by a trial child: %s" % [c["tool"] for c in trial if c["secret_value"]])
