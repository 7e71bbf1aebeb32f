/* What mimalloc needs from macOS's CommonCrypto/CommonCryptoError.h when the
 * build has no macOS SDK: zig knows libSystem's symbols (CCRandomGenerateBytes
 * is one) but ships no CommonCrypto headers. The type and value are those of
 * Apple's documented API. */
#ifndef CONDENSE_NATIVE_COMMONCRYPTOERROR_H
#define CONDENSE_NATIVE_COMMONCRYPTOERROR_H
#include <stdint.h>
typedef int32_t CCCryptorStatus;
enum { kCCSuccess = 0 };
#endif
