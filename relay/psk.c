#include "psk.h"

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <string.h>

int tm_psk_derive(const char *token, size_t token_len, unsigned char out[TM_PSK_BYTES]) {
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
  size_t n = TM_PSK_BYTES;
  int ok = ctx && EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
           EVP_PKEY_CTX_set1_hkdf_key(ctx, (const unsigned char *)token, (int)token_len) > 0 &&
           EVP_PKEY_CTX_add1_hkdf_info(ctx, (const unsigned char *)TM_PSK_LABEL,
                                       (int)strlen(TM_PSK_LABEL)) > 0 &&
           EVP_PKEY_derive(ctx, out, &n) > 0 && n == TM_PSK_BYTES;
  EVP_PKEY_CTX_free(ctx);
  return ok ? 0 : -1;
}
