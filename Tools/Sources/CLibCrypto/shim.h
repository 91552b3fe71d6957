#ifndef STROBE_CLIBCRYPTO_SHIM_H
#define STROBE_CLIBCRYPTO_SHIM_H
#include <openssl/evp.h>
#endif
