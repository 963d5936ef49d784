# A site's set-up for mft, sourced first by scripts/env.sh and so by every
# mft script and batch job. Copy it to site-env.sh beside env.sh (it is not
# tracked) or point MFT_SITE_ENV at your copy, and edit it: the modules mft
# was built with must be loaded where it runs. Examples (names differ by site):
#
# module purge
# module load gcc/12 openmpi/4.1 petsc/3.18 hdf5-mpi/1.12 boost/1.74 openblas
# export PKG_CONFIG_PATH=$PETSC_DIR/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# export MFT_PYTHON=$HOME/miniforge3/envs/mft/bin/python   # a Python with h5py, numpy, matplotlib
# export MFT_LAUNCH=srun                                    # launch with srun --mpi=pmix instead of mpirun
