/* The one CommonCrypto call mimalloc makes (see CommonCryptoError.h). */
#ifndef CONDENSE_NATIVE_COMMONRANDOM_H
#define CONDENSE_NATIVE_COMMONRANDOM_H
#include <stddef.h>
#include "CommonCryptoError.h"
typedef CCCryptorStatus CCRNGStatus;
CCRNGStatus CCRandomGenerateBytes(void *bytes, size_t count);
#endif
