#!/bin/sh
# The library's layers (lib/README): no two files of lib/ use each other's
# functions or variables, directly or through others (contrib/build/circles.sh
# on the objects in $OWT_BUILD/lib), and each file includes only its own
# folder's headers and lower layers' (contrib/build/includes.sh on the
# sources). Both detectors are shown to fail, naming what is wrong, on a
# small made-up case.
#
# What nm cannot see: the uses graph is that of the objects built here,
# so a call in an #if branch not compiled on this machine is not in it,
# nor one the compiler inlined away. The include rule is checked on the
# sources, every branch. sgemm512.c's fallback without AVX-512 (#else)
# called back into blas.c, a circle that nm does not show where the
# AVX-512 kernel is built: the last test greps that sgemm512.c calls no
# blas_ function in any branch.
. "${OWT_SRC:-.}/t/lib.sh"

circles=$OWT_SRC/contrib/build/circles.sh
includes=$OWT_SRC/contrib/build/includes.sh

if [ -d "$OWT_BUILD/lib" ] && command -v nm >/dev/null; then
	run sh "$circles" "$OWT_BUILD/lib" "$OWT_SRC/lib"
	is "$rc" 0 "no circle among lib/'s files"
	[ "$rc" = 0 ] || sed 's/^/# /' "$T/out" "$T/err"
else
	skip "no $OWT_BUILD/lib or no nm"
fi

# Three files, a -> b -> c -> a, and d using a: one circle of three.
mkdir -p "$T/src/x" "$T/obj/x"
printf 'int b1(void);\nint a1(void) { return b1(); }\n' >"$T/src/x/a.c"
printf 'extern int c2;\nint b1(void) { return c2; }\n' >"$T/src/x/b.c"
printf 'int a1(void);\nint c2 = 1;\nint c3(void) { return a1(); }\n' \
    >"$T/src/x/c.c"
printf 'int a1(void);\nint d1(void) { return a1(); }\n' >"$T/src/x/d.c"
for f in a b c d; do
	${CC:-cc} -c -o "$T/obj/x/$f.o" "$T/src/x/$f.c" || not_ok "cc $f.c"
done
run sh "$circles" "$T/obj" "$T/src"
is "$rc" 1 "circles.sh: a circle of three files exits 1"
printf '%s\n' 'circle: x/a.c x/b.c x/c.c' '  x/a.c uses x/b.c: b1' \
    '  x/b.c uses x/c.c: c2' '  x/c.c uses x/a.c: a1' >"$T/want"
same "$T/out" "$T/want" "circles.sh names the files and each use with its names"

# A weak reference is a use too (util.c's of input_maxline was one).
rm "$T/obj/x/c.o" "$T/obj/x/d.o"
printf 'int a1(void) __attribute__((weak));\nint b1(void) { return a1 ? a1() : 0; }\n' \
    >"$T/src/x/b.c"
${CC:-cc} -c -o "$T/obj/x/b.o" "$T/src/x/b.c" || not_ok "cc b.c"
run sh "$circles" "$T/obj" "$T/src"
is "$rc" 1 "circles.sh: a circle through a weak reference exits 1"
like "$T/out" '^  x/b\.c uses x/a\.c: a1$' "circles.sh names the weak use"

run sh "$includes" "$OWT_SRC"
is "$rc" 0 "every include of lib/ and kernels/ keeps to the layers"
[ "$rc" = 0 ] || sed 's/^/# /' "$T/out" "$T/err"

# A copy of the tree with four bad includes.
mkdir -p "$T/r"
cp -R "$OWT_SRC/lib" "$OWT_SRC/kernels" "$T/r/" &&
echo '#include "model/gpt.h"' >>"$T/r/lib/tok/tok.h" &&
echo '#include "web/url.h"' >>"$T/r/lib/text/words.c" &&
echo '#include "util.h"' >>"$T/r/lib/core/buf.c" &&
echo '#include "dist/dist.h"' >>"$T/r/kernels/owtcuda.h" ||
    not_ok "copy the tree"
run sh "$includes" "$T/r"
is "$rc" 1 "includes.sh: a bad include exits 1"
like "$T/out" '^lib/tok/tok\.h:[0-9]+: "model/gpt\.h": model is above tok$' \
    "a higher layer's header is named"
like "$T/out" '^lib/text/words\.c:[0-9]+: "web/url\.h": web and text sit side by side$' \
    "a header of a folder side by side is named"
like "$T/out" '^lib/core/buf\.c:[0-9]+: "util\.h": not by folder' \
    "an include without its folder is named"
like "$T/out" '^kernels/owtcuda\.h:[0-9]+: "dist/dist\.h": dist is above kernels$' \
    "kernels/ includes model and below only"
is "$(grep -c . "$T/out")" 5 "includes.sh: four lines and the layers"

# The #else branch nm does not see here: sgemm512.c calls nothing of blas.c.
run grep -n 'blas_[a-z_0-9]* *(' "$OWT_SRC/lib/model/sgemm512.c"
is "$rc" 1 "sgemm512.c calls no blas_ function in any #if branch"
[ "$rc" = 1 ] || sed 's/^/# /' "$T/out"

done_testing
