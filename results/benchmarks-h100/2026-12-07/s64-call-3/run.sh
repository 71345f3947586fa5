CALL=2 CALL_LIMIT=560 BUDGET=30 bash scripts/gpu/plans/s63/call.sh > $OUT/call.log 2>&1
