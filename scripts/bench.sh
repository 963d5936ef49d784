#!/usr/bin/env bash
# Runs mft-bench and its PyTorch peer at the reference size on the same cores
# and prints the ratio table against the performance goals (docs/PERFORMANCE.md).
# A benchmark: run it on a quiet machine; machines differ by
# 2-4x, ratios measured in one run travel better than seconds.
#   scripts/bench.sh [mft-bench options, e.g. --attention relu]
#   scripts/bench.sh --grid [--d 8,32 --n 16,64 --causal false,true]: the grid of sizes
#   scripts/bench.sh --checkpoints [--factor 4]: the adjoint's checkpoints, time against memory
set -euo pipefail
source "$(dirname "$0")/env.sh"
ranks=${MFT_RANKS:-2}
oversubscribe=()
[ "$(mft_cores)" -lt "$ranks" ] && oversubscribe=(--oversubscribe)
[ -x "$MFT_BUILD/apps/mft-bench" ] || mft_build >/dev/null
# The grid of sizes (d, n, causal): scripts/bench_grid.py.
if [ "${1:-}" = --grid ]; then
  shift
  exec "${MFT_PYTHON:-python3}" "$MFT_ROOT/scripts/bench_grid.py" --ranks "$ranks" "$@"
fi
if [ "${1:-}" = --checkpoints ]; then
  shift
  [ -x "$MFT_BUILD/apps/mft" ] || mft_build >/dev/null
  exec "${MFT_PYTHON:-python3}" "$MFT_ROOT/scripts/bench_checkpoints.py" --ranks "$ranks" "$@"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun -q -n "$ranks" "${oversubscribe[@]}" "$MFT_BUILD/apps/mft-bench" --json "$@" >"$work/mft.json"
# Strong scaling: the same problem on one rank (no NTK, no minibatches).
mpirun -q -n 1 "$MFT_BUILD/apps/mft-bench" --json --no-ntk --no-batches --no-kernel --no-mixed "$@" >"$work/one.json"
"${MFT_PYTHON:-python3}" "$MFT_ROOT/scripts/bench_torch.py" --threads "$ranks" --json >"$work/torch.json" || true
"${MFT_PYTHON:-python3}" - "$work/mft.json" "$work/one.json" "$work/torch.json" "$ranks" <<'PY'
import json, sys
mft, one = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ranks = int(sys.argv[4])
try:
    torch = json.load(open(sys.argv[3]))
except ValueError:
    torch = None
    print(open(sys.argv[3]).read().strip())
p = mft["phases"]
print(f"mft-bench: {mft['benchmark']}; OpenBLAS core {mft.get('blas_core') or '?'}")
print(f"DGEMM of these ranks: {mft['dgemm_gflops']:.2f} GFLOP/s")
step = p["training_step"]["seconds"]
scaling = one["phases"]["training_step"]["seconds"] / (ranks * step)
kernel = mft.get("kernel_phases", {})
print(f"{'':38}{'seconds':>10}{'ratio':>10}{'goal':>10}")
rows = [("forward solve (of DGEMM rate)", p["forward_solve"]["seconds"], p["forward_solve"]["dgemm_fraction"],
         ">= 0.70", p["forward_solve"]["dgemm_fraction"] >= 0.70),
        ("training step (forward solves)", step, mft["step_over_forward"], "<= 3.6", mft["step_over_forward"] <= 3.6)]
if "mixed" in mft:
    rows.append(("run.precision mixed (step x faster)", mft["mixed"]["training_step"], mft["mixed"]["step_speedup"],
                 ">= 1.6", mft["mixed"]["step_speedup"] >= 1.6))
if "ntk" in p:
    rows.append(("NTK, all parameters (training steps)", p["ntk"]["seconds"], mft["ntk_over_step"], "<= 1.6",
                 mft["ntk_over_step"] <= 1.6))
if torch:
    speedup = torch["training_step"] / step
    rows.append(("PyTorch step (mft is x faster)", torch["training_step"], speedup, ">= 25", speedup >= 25))
rows.append((f"step on {ranks} ranks (of 1 rank's, per rank)", step, scaling, ">= 0.95", scaling >= 0.95))
if "weights" in kernel:
    rows.append(("softmax, ns per score (one core)", None, kernel["weights"]["ns_per_score"], "<= 0.25",
                 kernel["weights"]["ns_per_score"] <= 0.25))
for name, seconds, ratio, goal, met in rows:
    shown = f"{seconds:10.4f}" if seconds is not None else f"{'':10}"
    print(f"{name:38}{shown}{ratio:10.3f}{goal:>10}  {'met' if met else 'not met'}")
batches = mft.get("minibatch_steps", [])
if batches:
    print("minibatch steps, of the full step: " + ", ".join(
        f"b = {b['batch']}: {b['of_full_step']:.3f}" for b in batches))
if kernel:
    print("kernel phases (one core, ns per query token): " + ", ".join(
        f"{k} {v['ns_per_query']:.0f}" + (f" ({v['dgemm_fraction']:.2f} of DGEMM)" if "dgemm_fraction" in v else "")
        for k, v in kernel.items() if "normal" not in k))
    if "langevin_normal" in kernel:
        print(f"Langevin's normals: {kernel['langevin_normal']['ns_per_query']:.1f} ns each "
              f"(the scalar Box-Muller: {kernel['scalar_normal']['ns_per_query']:.1f})")
print(f"peak RSS {mft['peak_rss_mib']:.1f} MiB per rank, depth trajectory {mft['trajectory_mib']:.1f} MiB per rank")
if torch:
    print(f"peer: {torch['benchmark']}")
PY
