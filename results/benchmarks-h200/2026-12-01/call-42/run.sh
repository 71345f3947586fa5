#!/usr/bin/env bash
# Call 42 (nvidia-h200): what torch.compile generates for the four tasks where kforge's margin is thin (the
# norms and row_sum): Inductor's source and Triton's PTX (scripts/gpu/profile_torch.py --code), to compare
# instruction by instruction with kforge's PTX. Nothing is timed here. (The first attempt's files were too
# deep to come back; they are packed into code.tgz now.)
W=$(mktemp -d)
for t in layernorm_plain layernorm rms_norm row_sum; do
  echo "== $t"
  timeout 150 python3 scripts/gpu/profile_torch.py "$t" compile --code "$W/$t" 2>&1 | tail -5
  find "$W/$t" \( -name '*.cubin' -o -name '*.so' -o -name '*.pkl' -o -name '*.llir' \) -delete
done
tar czf "$OUT/code.tgz" -C "$W" .
