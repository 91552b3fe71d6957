#ifndef STROBE_CZLIB_SHIM_H
#define STROBE_CZLIB_SHIM_H
#include <zlib.h>

/// deflateInit2 is a macro, which Swift does not import: this starts a
/// stream that writes a gzip member (window bits 15, plus 16 for the gzip
/// header and trailer).
static inline int strobe_deflate_init_gzip(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/// inflateInit2 for a gzip member, for tests that read the bytes back.
static inline int strobe_inflate_init_gzip(z_streamp stream) {
    return inflateInit2(stream, 15 + 16);
}
#endif
