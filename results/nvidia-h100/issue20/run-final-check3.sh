#!/usr/bin/env bash
# Issue 20, check-run3: run-final-check2.sh's steps again at 8392db3,
# CUDA.DMMA without the half-block epilogue (racecheck).
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h100/issue20/run-final-check3.sh OUT
exec "$(dirname "$0")/run-final-check2.sh" "$@"
