# Session 67, device call 3 (an H100 80GB HBM3): issue 34's 16-bit rows in two processes (the tuning process, then
# a second one measuring the first's best kernels: first-process.*, second-process.*; call2.log the script's log).
CALL=2 bash scripts/gpu/plans/s63/call.sh
