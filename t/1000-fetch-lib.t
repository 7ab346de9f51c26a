#!/bin/sh
# owt-fetch's library (t/unit-fetch.c): charsets, URL filter, robots.txt,
# address policy, extraction, the ordered pool.
exec "${OWT_BUILD:-build}/t/unit-fetch"
