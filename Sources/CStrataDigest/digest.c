// SHA-1 and SHA-256 (FIPS 180-4), HMAC (RFC 2104) and PBKDF2 (RFC 8018).
// Written for `strata serve`'s passwords; the tests check each function
// against the standards' vectors and Python's hashlib.

#include "strata_digest.h"

#include <string.h>

typedef struct {
    strata_digest_function function;
    uint32_t state[8];
    uint64_t length;      // bytes hashed so far
    uint8_t block[64];
    size_t used;          // bytes waiting in `block`
} hash_context;

static const uint32_t sha256_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotate_left(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }
static inline uint32_t rotate_right(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static inline uint32_t load_big_endian(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline void store_big_endian(uint8_t *p, uint32_t x) {
    p[0] = (uint8_t)(x >> 24); p[1] = (uint8_t)(x >> 16); p[2] = (uint8_t)(x >> 8); p[3] = (uint8_t)x;
}

static void sha1_compress(uint32_t state[5], const uint8_t block[64]) {
    uint32_t w[80];
    for (int t = 0; t < 16; t++) w[t] = load_big_endian(block + 4 * t);
    for (int t = 16; t < 80; t++) w[t] = rotate_left(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
    for (int t = 0; t < 80; t++) {
        uint32_t f, k;
        if (t < 20) { f = (b & c) | (~b & d); k = 0x5a827999; }
        else if (t < 40) { f = b ^ c ^ d; k = 0x6ed9eba1; }
        else if (t < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdc; }
        else { f = b ^ c ^ d; k = 0xca62c1d6; }
        uint32_t next = rotate_left(a, 5) + f + e + k + w[t];
        e = d; d = c; c = rotate_left(b, 30); b = a; a = next;
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d; state[4] += e;
}

static void sha256_compress(uint32_t state[8], const uint8_t block[64]) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++) w[t] = load_big_endian(block + 4 * t);
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotate_right(w[t - 15], 7) ^ rotate_right(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotate_right(w[t - 2], 17) ^ rotate_right(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
        uint32_t s1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
        uint32_t choice = (e & f) ^ (~e & g);
        uint32_t t1 = h + s1 + choice + sha256_constants[t] + w[t];
        uint32_t s0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
        uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = s0 + majority;
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d;
    state[4] += e; state[5] += f; state[6] += g; state[7] += h;
}

static size_t digest_length(strata_digest_function function) {
    return function == STRATA_DIGEST_SHA1 ? 20 : 32;
}

static void hash_start(hash_context *context, strata_digest_function function) {
    static const uint32_t sha1_initial[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    static const uint32_t sha256_initial[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memset(context, 0, sizeof *context);
    context->function = function;
    if (function == STRATA_DIGEST_SHA1) memcpy(context->state, sha1_initial, sizeof sha1_initial);
    else memcpy(context->state, sha256_initial, sizeof sha256_initial);
}

static void hash_compress(hash_context *context, const uint8_t block[64]) {
    if (context->function == STRATA_DIGEST_SHA1) sha1_compress(context->state, block);
    else sha256_compress(context->state, block);
}

static void hash_add(hash_context *context, const uint8_t *data, size_t length) {
    context->length += length;
    if (context->used > 0) {
        size_t take = 64 - context->used < length ? 64 - context->used : length;
        memcpy(context->block + context->used, data, take);
        context->used += take;
        data += take;
        length -= take;
        if (context->used < 64) return;
        hash_compress(context, context->block);
        context->used = 0;
    }
    while (length >= 64) {
        hash_compress(context, data);
        data += 64;
        length -= 64;
    }
    memcpy(context->block, data, length);
    context->used = length;
}

static void hash_finish(hash_context *context, uint8_t *out) {
    uint64_t bits = context->length * 8;
    context->block[context->used++] = 0x80;
    if (context->used > 56) {
        memset(context->block + context->used, 0, 64 - context->used);
        hash_compress(context, context->block);
        context->used = 0;
    }
    memset(context->block + context->used, 0, 56 - context->used);
    for (int i = 0; i < 8; i++) context->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    hash_compress(context, context->block);
    size_t words = digest_length(context->function) / 4;
    for (size_t i = 0; i < words; i++) store_big_endian(out + 4 * i, context->state[i]);
}

void strata_sha1(const uint8_t *data, size_t length, uint8_t out[20]) {
    hash_context context;
    hash_start(&context, STRATA_DIGEST_SHA1);
    hash_add(&context, data, length);
    hash_finish(&context, out);
}

void strata_sha256(const uint8_t *data, size_t length, uint8_t out[32]) {
    hash_context context;
    hash_start(&context, STRATA_DIGEST_SHA256);
    hash_add(&context, data, length);
    hash_finish(&context, out);
}

/// The inner and outer contexts of HMAC with one key, each having hashed
/// its padded key: every message then costs its own blocks and one more.
typedef struct {
    hash_context inner;
    hash_context outer;
} hmac_key;

static void hmac_prepare(hmac_key *prepared, strata_digest_function function, const uint8_t *key, size_t key_length) {
    uint8_t padded[64] = {0};
    if (key_length > 64) {
        hash_context context;
        hash_start(&context, function);
        hash_add(&context, key, key_length);
        hash_finish(&context, padded);
    } else if (key_length > 0) {
        memcpy(padded, key, key_length);
    }
    uint8_t pad[64];
    for (int i = 0; i < 64; i++) pad[i] = padded[i] ^ 0x36;
    hash_start(&prepared->inner, function);
    hash_add(&prepared->inner, pad, 64);
    for (int i = 0; i < 64; i++) pad[i] = padded[i] ^ 0x5c;
    hash_start(&prepared->outer, function);
    hash_add(&prepared->outer, pad, 64);
}

/// HMAC of `first` then `second` (either may be empty) with a prepared key.
static void hmac_with(const hmac_key *prepared, const uint8_t *first, size_t first_length,
                      const uint8_t *second, size_t second_length, uint8_t *out) {
    uint8_t inner_digest[32];
    hash_context context = prepared->inner;
    if (first_length > 0) hash_add(&context, first, first_length);
    if (second_length > 0) hash_add(&context, second, second_length);
    hash_finish(&context, inner_digest);
    context = prepared->outer;
    hash_add(&context, inner_digest, digest_length(prepared->inner.function));
    hash_finish(&context, out);
}

void strata_hmac(strata_digest_function function, const uint8_t *key, size_t key_length,
                 const uint8_t *data, size_t length, uint8_t *out) {
    hmac_key prepared;
    hmac_prepare(&prepared, function, key, key_length);
    hmac_with(&prepared, data, length, NULL, 0, out);
}

int strata_pbkdf2(strata_digest_function function, const uint8_t *password, size_t password_length,
                  const uint8_t *salt, size_t salt_length, uint32_t iterations,
                  uint8_t *out, size_t out_length) {
    if (iterations == 0) return -1;
    size_t length = digest_length(function);
    if (out_length / length >= UINT32_MAX) return -1;
    hmac_key prepared;
    hmac_prepare(&prepared, function, password, password_length);
    uint32_t block_number = 1;
    while (out_length > 0) {
        uint8_t number[4];
        store_big_endian(number, block_number);
        uint8_t u[32], t[32];
        hmac_with(&prepared, salt, salt_length, number, 4, u);
        memcpy(t, u, length);
        for (uint32_t round = 1; round < iterations; round++) {
            hmac_with(&prepared, u, length, NULL, 0, u);
            for (size_t i = 0; i < length; i++) t[i] ^= u[i];
        }
        size_t take = out_length < length ? out_length : length;
        memcpy(out, t, take);
        out += take;
        out_length -= take;
        block_number++;
    }
    return 0;
}
