"""The injectivity table of [B]: for each distribution family, the NTK of the
V-part at initialisation and the log-sum-exp (CGF) margin of its token
measures, and whether the two agree on "injective".

[B]: the gradient flow converges linearly to a global minimum when
K_V = (M L) J_V J_V^T is positive definite at initialisation, and that holds
exactly when the functions Lambda_{mu_i}(z) = log E_{mu_i} exp(<z, x>) are
linearly independent modulo affine functions. Families where [B] states this
holds: distinct discrete measures, uniform cubes of different radii,
symmetric Laplace with different covariances, two-component Gaussian
mixtures with different separations. It fails when some combination of the
Lambda's is affine: Gaussians with one covariance (the gaussian-cov control).

Each row runs `mft ntk --cgf` (mpirun, 2 ranks by default) and reads the
/ntk group of its output. "injective" means lambda_min/lambda_max > 1e-8 for
the NTK and margin > 1e-8 for the CGF (rounding leaves dependent columns near
1e-16 of the largest singular value). The empirical columns are computed on
the n sampled tokens of each sequence; the population margin uses the
closed-form Lambda (n -> infinity).

  python3 scripts/ntk_table.py [--ranks 2] [--tokens 64] [--gaussian-cov MEANS;VARIANCES ...]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from . import io as mft_io
from .usage import usage_text

THRESHOLD = 1e-8
# The checkout this package lies in (scripts/mft/ntk_table.py): its default build.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_row(args, label, keys, workdir, tokens):
    out = os.path.join(workdir, f"{len(os.listdir(workdir))}.h5")
    cmd = [args.mpirun, "-q", "-n", str(args.ranks), args.mft, "ntk", "--cgf",
           "--data.task", "families", "--model.d", "2", "--model.head_dim", "2",
           "--model.heads", str(args.heads), "--model.slices", "4", "--data.sequences", "4",
           "--data.tokens", str(tokens), "--cgf.radius", "1.2", "--output.file", out] + keys
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        sys.exit(f"error: {label}: mft ntk failed: {said[-1] if said else f'exit status {done.returncode}'}")
    run = mft_io.open_run(out)
    if "ntk" not in run.file:
        raise mft_io.RunFileError(f"{out}: no /ntk (mft ntk wrote no NTK)")
    a = dict(run.file["ntk"].attrs)
    return {
        "family": label,
        "lmin": float(a["lambda_min"]), "lmax": float(a["lambda_max"]),
        "emp": float(a["cgf_margin"]),
        "pop": float(a["cgf_margin_population"]) if "cgf_margin_population" in a else None,
    }


@mft_io.exit_on_run_file_error
def main(argv=None):
    parser = argparse.ArgumentParser(description=usage_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=2, help="MPI ranks per run (default 2)")
    parser.add_argument("--tokens", type=int, default=64, help="tokens n per sequence (default 64)")
    parser.add_argument("--heads", type=int, default=64, help="heads M per slice (default 64)")
    parser.add_argument("--gaussian-cov", action="append", default=[], metavar="MEANS;VARIANCES",
                        help="a gaussian-cov control, e.g. '0:1;1:1' (shifts a_i; variances v_i), repeatable")
    parser.add_argument("--mft", default=os.path.join(ROOT, "build", "apps", "mft"),
                        help="the mft program (default: build/apps/mft)")
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    args = parser.parse_args(argv)
    if not os.path.exists(args.mft):
        sys.exit(f"error: {args.mft}: no mft program (build it: scripts/test.sh or cmake --build build)")

    controls = args.gaussian_cov or ["0:1;1:1"]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for kind in ("discrete", "cube", "laplace", "mixture"):
            rows.append(run_row(args, kind, ["--families.kind", kind], work, args.tokens))
        for spec in controls:
            means, _, variances = spec.partition(";")
            keys = ["--families.kind", "gaussian-cov", "--families.values", means]
            if variances:
                keys += ["--families.variances", variances]
            for n in (args.tokens, 8 * args.tokens):
                rows.append(run_row(args, f"gaussian-cov {spec} (n={n})", keys, work, n))

    def verdict(x):
        return "-" if x is None else ("yes" if x > THRESHOLD else "no")

    print(f"V-part NTK and CGF margins: d=2, N=4 sequences, n={args.tokens} tokens, M={args.heads} heads x L=4 slices")
    print(f"{'family':<30} {'lambda_min':>11} {'lambda_max':>11} {'ratio':>10} {'CGF emp.':>10} {'CGF pop.':>10}"
          f"  {'NTK':>4} {'CGF':>4} {'agree':>5} {'pop.':>4}")
    for r in rows:
        ratio = r["lmin"] / r["lmax"]
        ntk, cgf = verdict(ratio), verdict(r["emp"])
        pop = "-" if r["pop"] is None else f"{r['pop']:10.2e}"
        print(f"{r['family']:<30} {r['lmin']:11.3e} {r['lmax']:11.3e} {ratio:10.2e} {r['emp']:10.2e} {pop:>10}"
              f"  {ntk:>4} {cgf:>4} {'yes' if ntk == cgf else 'NO':>5} {verdict(r['pop']):>4}")


if __name__ == "__main__":
    main()
