#!/usr/bin/env python3
"""Stands in for kforge-compile or kforge-run (copied under that name next to a copy of kforge-tune): appends to
$ENV_SPY_LOG which of the variables named in $ENV_SPY_WATCH (comma-separated) it inherited, and whether any
variable's value holds $ENV_SPY_SECRET_PREFIX, then runs the real tool from $ENV_SPY_REAL_DIR."""
import json
import os
import sys

name = os.path.basename(sys.argv[0])
watch = os.environ.get("ENV_SPY_WATCH", "").split(",")
prefix = os.environ.get("ENV_SPY_SECRET_PREFIX", "")
with open(os.environ["ENV_SPY_LOG"], "a") as log:
    log.write(json.dumps({"tool": name, "args": sys.argv[1:3],
                          "inherited": [v for v in watch if v and v in os.environ],
                          "secret_value": bool(prefix) and any(prefix in v for k, v in os.environ.items()
                                                                  if not k.startswith("ENV_SPY_"))}) + "\n")
real = os.path.join(os.environ["ENV_SPY_REAL_DIR"], name)
os.execv(real, [real] + sys.argv[1:])
