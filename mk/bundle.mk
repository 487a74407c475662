# The GPU-node bundle: the fits binary and a check script that run without Go or network (docs/setup.md,
# "A GPU node without Go"). Included by the top Makefile (which exports GOTOOLCHAIN, GOEXPERIMENT=simd and
# GOMLX_NO_AUTO_INSTALL=1).

BUNDLE := bin/fits-bundle.tar.xz

.PHONY: bundle bundle-rehearsal

# bin/fits-bundle.tar.xz (at most 50 MB): fits, the non-glibc libraries it links, run.sh, README.txt.
bundle:
	@BUNDLE_OUT=$(BUNDLE) bash scripts/bundle.sh

# The bundle unpacked into a temporary folder and its run.sh run there on XLA CPU at small sizes with Go
# removed from PATH; fails unless every stage wrote its JSON and exited 0.
bundle-rehearsal: bundle
	@bash scripts/bundle-rehearsal.sh $(BUNDLE)
