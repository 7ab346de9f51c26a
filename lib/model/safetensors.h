/* safetensors.h - the safetensors format: a checked reader (mapped) and an F32 writer */
#ifndef OWT_SAFETENSORS_H
#define OWT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

/* The format: an 8-byte little-endian header size, a JSON header, the data. */
enum { SAFETENSORS_F32, SAFETENSORS_F16, SAFETENSORS_BF16 };

#define SAFETENSORS_MAXRANK 8
struct safetensors_tensor {
	char *name;
	int dtype;		/* ST_*, or -1 for the other dtypes */
	int rank;
	int64_t shape[SAFETENSORS_MAXRANK];
	size_t nelem;
	size_t begin, end;	/* data_offsets */
	const unsigned char *data;
};

struct json_val;
struct safetensors_file {
	unsigned char *map;
	size_t size;
	struct safetensors_tensor *t;
	size_t n;
	struct json_val *hdr;	/* the parsed header; "__metadata__" in it */
};

/*
 * 0, or -1 with err "PATH: what" and *code: the file is checked as the
 * safetensors library checks it (a known dtype and the bytes of its shape
 * for every tensor, offsets that cover the data exactly, in order, without
 * gaps or overlaps), and no name twice.
 */
int safetensors_open(struct safetensors_file *f, const char *path, char *err,
    size_t errsize, int *code);
const struct safetensors_tensor *safetensors_find(
    const struct safetensors_file *f, const char *name);
/* The tensor's elements as floats (F32, F16 and BF16 are read). */
void safetensors_to_f32(const struct safetensors_tensor *t, float *out);
void safetensors_close(struct safetensors_file *f);

/* One tensor to write: F32, row-major. */
struct safetensors_out {
	char name[96];
	int rank;
	int64_t shape[2];
	const float *data;
};
/*
 * Write a safetensors file with the mode of open(0666) under the umask,
 * not synced (it goes into a directory that outfile_commit syncs); meta
 * holds extra members of "__metadata__" ("\"step\":\"5\"") or is NULL.
 * 0, or -1 with err (XSYS).
 */
int safetensors_write(const char *path, const char *meta,
    const struct safetensors_out *t, size_t n, char *err, size_t errsize);

#endif
