#!/usr/bin/env bash
# sbatch with the site's options: those of the installation's file
# (site-options beside this script) and the user's ($MFT_SLURM_OPTIONS, else
# ~/.config/mft/slurm-options), then the options given here, which win
# (options.sh says how the files are read). submit_sweep.sh submits its jobs
# through it; submit single runs and scaling series the same way:
#   scripts/slurm/sbatch.sh [sbatch options ...] scripts/slurm/train.sbatch [mft train options ...]
#   scripts/slurm/sbatch.sh -N 4 --ntasks-per-node=64 scripts/slurm/scaling.sbatch
# $MFT_SBATCH names another sbatch program.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/options.sh"
mft_site_options || exit 2
exec "${MFT_SBATCH:-sbatch}" ${mft_sbatch_site[@]+"${mft_sbatch_site[@]}"} "$@"
