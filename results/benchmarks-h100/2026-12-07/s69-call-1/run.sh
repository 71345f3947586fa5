# Session 69, device call 1 (an H100 80GB HBM3): issue 28's first-kernel study on its four payloads (fk/), then
# issue 27's prime-shaped gemms at 35 s a task (irr/). The call's file count left out irr/h200.md and
# irr/h200.json; irr/h200-printed.md is the table as the call printed it (its output's last 12,000 characters).
CALL=1 CALL_LIMIT=560 bash scripts/gpu/plans/s69/call.sh
