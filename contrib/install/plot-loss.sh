#!/bin/sh
# plot-loss.sh - draw the loss curves of gpt-train --log-json FILE to a PNG
# usage: plot-loss.sh log.jsonl [out.png]   (default: log.png beside the log)
# Training loss per logged iteration, and validation loss where evaluated.
# Needs gnuplot (Debian: gnuplot-nox).
set -eu
[ $# -ge 1 ] || { echo "usage: plot-loss.sh log.jsonl [out.png]" >&2; exit 2; }
log=$1
out=${2:-${log%.jsonl}.png}
command -v gnuplot >/dev/null || { echo "plot-loss.sh: needs gnuplot (apt-get install gnuplot-nox)" >&2; exit 3; }
[ -r "$log" ] || { echo "plot-loss.sh: cannot read '$log'" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plot-loss.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# "key": value of a JSON line, for the keys gpt-train writes
sed -n 's/.*"iteration": \([0-9]*\), "loss": \([^,}]*\).*/\1 \2/p' "$log" >"$tmp/train"
sed -n 's/.*"iteration": \([0-9]*\), "valid_loss": \([^,}]*\).*/\1 \2/p' "$log" >"$tmp/valid"
[ -s "$tmp/train" ] || { echo "plot-loss.sh: $log: no training loss lines" >&2; exit 1; }
plot="'$tmp/train' using 1:2 with lines lw 2 title 'train'"
[ -s "$tmp/valid" ] && plot="$plot, '$tmp/valid' using 1:2 with linespoints lw 2 pt 7 title 'valid'"
gnuplot <<GP
set terminal pngcairo size 900,540
set output '$out'
set title 'gpt-train: $(basename "$log")' noenhanced
set xlabel 'iteration'
set ylabel 'loss (nats per token)'
set grid
set key top right
plot $plot
GP
echo "$out"
