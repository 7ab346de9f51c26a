/* sha256.h - SHA-256 (FIPS 180-4) of a byte string, as sha256sum(1) prints it */
#ifndef OWT_SHA256_H
#define OWT_SHA256_H

#include <stddef.h>

/* The digest of p[0..n) in hex[65]: 64 lower-case hex digits and a NUL. */
void sha256_hex(const void *p, size_t n, char hex[65]);

#endif
