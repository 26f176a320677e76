/* The link's pre-shared key, derived from the token (docs/format.md, "The
 * encrypted link"). The display derives the same key with Qt
 * (display/net/linkpsk.cpp); both must change together. */
#ifndef THREADMON_RELAY_PSK_H
#define THREADMON_RELAY_PSK_H

#include <stddef.h>

#define TM_PSK_BYTES 32
#define TM_PSK_IDENTITY "threadmon"
#define TM_PSK_LABEL "threadmon link psk v1"
#define TM_PSK_CIPHER "ECDHE-PSK-CHACHA20-POLY1305"

/* HKDF-SHA256 (RFC 5869) of the token, no salt, info TM_PSK_LABEL.
 * Returns 0, or -1 when OpenSSL fails. */
int tm_psk_derive(const char *token, size_t token_len, unsigned char out[TM_PSK_BYTES]);

#endif
