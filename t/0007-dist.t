#!/bin/sh
# Megatron's rank layout (t/unit-dist.c): groups as Megatron's
# initialize_model_parallel makes them for every world of 1 to 8 ranks,
# stages, tensor-parallel slices that add up to every tensor, the
# vocabulary padding, the samples of each replica, and the layout errors.
exec "${OWT_BUILD:-build}/t/unit-dist"
