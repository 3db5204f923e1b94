#!/bin/sh
# A stand-in ptxas for kernel-report.test: writes the cubin it is asked for
# (empty) and reports, as `ptxas -v` does, a kernel `k` that spills.
for a; do case "$a" in *.cubin) : > "$a" ;; esac; done
echo "ptxas info    : Compiling entry function 'k' for 'sm_90'" >&2
echo "ptxas info    : Function properties for k" >&2
echo "    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads" >&2
echo "ptxas info    : Used 255 registers, used 1 barriers, 2048 bytes smem" >&2
