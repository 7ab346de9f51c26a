#!/bin/sh
# The text fixer (t/unit-textfix.c): ftfy's own examples, and at least 97%
# exact agreement with ftfy 6.3.1 on ../shared/data/ftfy-dev (skipped there
# when ../shared is absent).
exec "${OWT_BUILD:-build}/t/unit-textfix"
