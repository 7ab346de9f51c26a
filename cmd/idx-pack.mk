PKGS_idx-pack = yajl zlib libzstd
DEB_PKGS += python3-numpy

# The token loops of the stream reader and the dataset writer vectorize at
# -O3 (not at -O2): a third of idx-pack's CPU time. pack.o holds --cat's
# check of every id against the vocabulary.
$(B)/lib/tok/tok.o $(B)/lib/tok/mmidx.o $(B)/lib/tok/pack.o: OWT_CFLAGS += -O3
