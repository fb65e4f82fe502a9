#ifndef STRATA_DIGEST_H
#define STRATA_DIGEST_H

// SHA-1, SHA-256 and PBKDF2 with HMAC over either: what `strata serve` needs
// to keep and check passwords the way CouchDB does (FIPS 180-4, RFC 2104,
// RFC 8018). Plain C, so that a debug build still derives a key in a
// reasonable time; checked against the standards' test vectors.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The hash functions PBKDF2 can use here.
typedef enum {
    STRATA_DIGEST_SHA1 = 1,
    STRATA_DIGEST_SHA256 = 2,
} strata_digest_function;

/// Writes SHA-1 of `length` bytes at `data` (20 bytes) to `out`.
void strata_sha1(const uint8_t *data, size_t length, uint8_t out[20]);

/// Writes SHA-256 of `length` bytes at `data` (32 bytes) to `out`.
void strata_sha256(const uint8_t *data, size_t length, uint8_t out[32]);

/// Writes HMAC of `length` bytes at `data` keyed by `key` to `out` (20 bytes
/// for SHA-1, 32 for SHA-256).
void strata_hmac(strata_digest_function function, const uint8_t *key, size_t key_length,
                 const uint8_t *data, size_t length, uint8_t *out);

/// PBKDF2 (RFC 8018) with HMAC-`function`: writes `out_length` bytes derived
/// from the password and salt in `iterations` rounds to `out`. Returns 0, or
/// -1 when `iterations` is 0 or the salt is too long to carry its block
/// number.
int strata_pbkdf2(strata_digest_function function, const uint8_t *password, size_t password_length,
                  const uint8_t *salt, size_t salt_length, uint32_t iterations,
                  uint8_t *out, size_t out_length);

/// Whether SHA-256 may use the processor's SHA extensions where it has them
/// (x86-64): on by default. The tests turn them off to check the portable
/// code on the same machine.
void strata_digest_use_extensions(int enabled);

#ifdef __cplusplus
}
#endif

#endif
