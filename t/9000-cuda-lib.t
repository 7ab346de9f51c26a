#!/bin/sh
# The CUDA backend against the CPU backend (t/unit-cuda.c): every launcher
# in fp32, bf16 and fp16 on seeded random inputs with its stated
# threshold, the embedding gradients bit for bit, then 20 training steps
# of a small model on both (fp32 with and without dropout, bf16, fp16 with
# loss scaling); with dropout a second GPU run, and runs with full and
# selective activation recomputation, give bit-identical losses. Skips
# without a CUDA build or a device.
u="${OWT_BUILD:-build}/t/unit-cuda"
[ -x "$u" ] || { echo "1..0 # SKIP built without CUDA (no t/unit-cuda)"; exit 0; }
exec "$u"
