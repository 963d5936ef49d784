#!/usr/bin/env bash
# One Euler step of `mft train` is gradient descent with the gradient that an
# independent NumPy model (mft.reference, scripts/mft/reference.py) finds by finite
# differences, from the file alone: both readouts, with and without the MLP.
source "$(dirname "$0")/common.sh"

small=(--model.d 4 --model.head_dim 3 --model.heads 5 --model.slices 3 --data.sequences 8
       --data.tokens 6 --train.steps 1 --train.ts_type euler)
cases=(
  "query:"
  "mean-mlp-decay:--readout.kind mean --model.mlp_particles 3 --model.mlp_width 4 --model.activation gelu --train.lambda 0.1 --depth.steps_per_slice 2"
  "icl-3bs:--data.task icl-linear --depth.rk_type 3bs --model.activation gelu --model.mlp_particles 2 --model.mlp_width 3"
)
for case in "${cases[@]}"; do
  name=${case%%:*}
  read -r -a extra <<<"${case#*:}"
  gradient_step "$name" 2 "${small[@]}" "${extra[@]}"
done
finish
