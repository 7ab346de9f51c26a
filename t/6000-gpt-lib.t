#!/bin/sh
# The model library's unit tests (t/unit-gpt.c): safetensors, both
# matrix products, the learning-rate schedule, every layer
# against double-precision references and finite differences (dropout
# included), AdamW, checkpoints in both Hugging Face spellings, and
# Megatron's sample order against its test vectors.
exec "${OWT_BUILD:-build}/t/unit-gpt"
