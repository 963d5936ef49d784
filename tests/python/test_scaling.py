#!/usr/bin/env python3
"""The communication model of docs/SCALING.md (mft.scaling) against hand
arithmetic, and its collector on mft-bench JSON lines."""
import json
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from mft import scaling  # noqa: E402

alpha, beta = 2e-6, 1e-9
assert scaling.allreduce_seconds(1, 1e6, alpha, beta) == 0.0
# Two ranks: one exchange of the whole message.
assert math.isclose(scaling.allreduce_seconds(2, 1e6, alpha, beta), alpha + 1e6 * beta)
# 1,024 ranks, 8 MB: reduce-scatter + all-gather, 2 log2 p latencies and 2 (p-1)/p m beta.
assert math.isclose(scaling.allreduce_seconds(1024, 8e6, alpha, beta), 20 * alpha + 2 * 1023 / 1024 * 8e6 * beta)
# 1,024 ranks, 8 bytes: recursive doubling.
assert math.isclose(scaling.allreduce_seconds(1024, 8, alpha, beta), 10 * (alpha + 8 * beta))

# The flops of one evaluation at mft-bench's reference size: 0.235 GFLOP, as mft-bench prints.
assert scaling.evaluation_flops(256, 16, 8, 8, 64) == 234881024

machine = dict(scaling.CLUSTER, overhead=0.0)
size = {"N": 256, "n": 16, "d": 8, "dh": 8, "M": 64, "L": 16}
one = scaling.step_cost(size, 1, 1, machine)
assert one["stage comm"] == one["gradient comm"] == 0.0
assert math.isclose(one["compute"], 3.43 * 64 * 234881024 / 20e9)
# 4 head ranks in a node: 2 L k s all-reduces of the whole state on 4 ranks.
four = scaling.step_cost(size, 4, 1, machine)
m = 8 * 256 * 16 * 8
expect = 2 * 64 * scaling.allreduce_seconds(4, m, machine["alpha_intra"], machine["beta_intra"])
assert math.isclose(four["stage comm"], expect), (four, expect)
# The best grid never gives a rank no heads or a group no sequences.
for P in (64, 4096):
    P_h, P_s, _ = scaling.best_grid(size, P, machine)
    assert P_h * P_s == P and P_h <= 64 and P_s <= 256

with tempfile.TemporaryDirectory() as tmp:
    paths = []
    for series, ranks, step in (("strong", 1, 4.0), ("strong", 2, 2.5), ("weak", 1, 4.0), ("weak", 2, 5.0)):
        groups = " = 1 head rank x 2 sequence groups" if ranks == 2 else ""
        line = {"benchmark": f"N=256 n=16 d=8 d_h=8 M=64 L=16, RK 4, k=1, softmax, {ranks} ranks{groups}",
                "ranks": ranks, "phases": {"training_step": {"seconds": step}, "forward_solve": {"seconds": 1.0}}}
        p = Path(tmp) / f"{series}-{ranks}.json"
        p.write_text(json.dumps(line) + "\n")
        paths.append(str(p))
    rows = {(r["series"], r["ranks"]): r for r in scaling.collect(paths)}
    assert math.isclose(rows["strong", 2]["efficiency"], 4.0 / (2 * 2.5))
    assert math.isclose(rows["weak", 2]["efficiency"], 4.0 / 5.0)
    assert rows["strong", 2]["groups"] == 2 and rows["strong", 1]["groups"] == 1
print("scaling model: all checks passed")
