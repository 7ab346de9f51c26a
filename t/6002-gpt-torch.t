#!/bin/sh
# The model against PyTorch (contrib/oracle/gpt2-torch.py, Debian's python3-torch):
# logits, loss, every gradient, and every weight after two AdamW iterations
# with gradient accumulation and clipping, each tensor within 1e-4 of its
# largest value. Skips where torch is absent.
. "${OWT_SRC:-.}/t/lib.sh"

py=/usr/bin/python3
[ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null ||
    skip_all "no PyTorch (apt-get install python3-torch)"
"$OWT_BUILD/t/unit-gpt" dump "$T/d" || { echo "Bail out! unit-gpt dump failed"; exit 1; }
exec "$py" "$OWT_SRC/contrib/oracle/gpt2-torch.py" check "$T/d"
