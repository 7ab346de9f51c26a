#!/bin/sh
# lib/serve_api.c (t/unit-serve.c): OpenAI streams hold back half UTF-8
# characters and text that may become a stop string, and send it once
# it cannot; the unstreamed text is cut at a stop string alike.
exec "${OWT_BUILD:-build}/t/unit-serve"
