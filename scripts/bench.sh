#!/usr/bin/env bash
# Runs mft-bench and its PyTorch peer at the reference size on the same cores
# and prints the ratio table against the performance goals (docs/PERFORMANCE.md).
# A benchmark: run it on a quiet machine; machines differ by
# 2-4x, ratios measured in one run travel better than seconds.
#   scripts/bench.sh [mft-bench options, e.g. --attention relu]
set -euo pipefail
source "$(dirname "$0")/env.sh"
ranks=${MFT_RANKS:-2}
oversubscribe=()
[ "$(nproc)" -lt "$ranks" ] && oversubscribe=(--oversubscribe)
[ -x "$MFT_BUILD/apps/mft-bench" ] || mft_build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun -q -n "$ranks" "${oversubscribe[@]}" "$MFT_BUILD/apps/mft-bench" --json "$@" >"$work/mft.json"
"${MFT_PYTHON:-python3}" "$MFT_ROOT/scripts/bench_torch.py" --threads "$ranks" --json >"$work/torch.json" || true
"${MFT_PYTHON:-python3}" - "$work/mft.json" "$work/torch.json" <<'PY'
import json, sys
mft = json.load(open(sys.argv[1]))
try:
    torch = json.load(open(sys.argv[2]))
except ValueError:
    torch = None
    print(open(sys.argv[2]).read().strip())
p = mft["phases"]
print(f"mft-bench: {mft['benchmark']}; OpenBLAS core {mft.get('blas_core') or '?'}")
print(f"DGEMM of these ranks: {mft['dgemm_gflops']:.2f} GFLOP/s")
print(f"{'':34}{'seconds':>10}{'ratio':>12}{'goal':>12}")
rows = [("forward solve (of DGEMM rate)", p["forward_solve"]["seconds"], p["forward_solve"]["dgemm_fraction"],
         ">= 0.35", p["forward_solve"]["dgemm_fraction"] >= 0.35),
        ("training step (forward solves)", p["training_step"]["seconds"], mft["step_over_forward"], "<= 2.0",
         mft["step_over_forward"] <= 2.0)]
if "ntk" in p:
    rows.append(("mft ntk (training steps)", p["ntk"]["seconds"], mft["ntk_over_step"], "<= 3", mft["ntk_over_step"] <= 3))
if torch:
    speedup = torch["training_step"] / p["training_step"]["seconds"]
    rows.append(("PyTorch step (mft is x faster)", torch["training_step"], speedup, ">= 15", speedup >= 15))
for name, seconds, ratio, goal, met in rows:
    print(f"{name:34}{seconds:10.4f}{ratio:12.3f}{goal:>12}  {'met' if met else 'not met'}")
print(f"peak RSS {mft['peak_rss_mib']:.1f} MiB per rank, depth trajectory {mft['trajectory_mib']:.1f} MiB per rank")
if torch:
    print(f"peer: {torch['benchmark']}")
PY
