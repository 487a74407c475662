# The Slurm path of `fits sweep`, tested on a real single-node cluster.
# Included by the top Makefile (which exports GOTOOLCHAIN, GOEXPERIMENT=simd and GOMLX_NO_AUTO_INSTALL=1).

.PHONY: slurm-test

# Needs root: installs Debian's slurm-wlm and munge when missing, starts munged, slurmctld and slurmd of its
# own (stopped at the end), runs a 2 x 2 sweep as a Slurm array job and as a local sweep, and checks that
# both aggregate to the same table. See scripts/slurm-test.sh for its settings.
slurm-test:
	@bash scripts/slurm-test.sh
