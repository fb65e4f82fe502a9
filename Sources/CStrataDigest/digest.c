// SHA-1 and SHA-256 (FIPS 180-4), HMAC (RFC 2104) and PBKDF2 (RFC 8018).
// Written for `strata serve`'s passwords; the tests check each function
// against the standards' vectors and Python's hashlib.

#include "strata_digest.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>
#define STRATA_SHA_NI 1
/// 0 when the tests turned the extensions off (strata_digest_use_extensions).
static int sha_extensions_allowed = 1;
#endif

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

void strata_digest_use_extensions(int enabled) {
#ifdef STRATA_SHA_NI
    // Looked up again on the next block when allowed; 0 keeps them off.
    __atomic_store_n(&sha_extensions_allowed, enabled ? 1 : 0, __ATOMIC_RELAXED);
#else
    (void)enabled;
#endif
}

#ifdef STRATA_SHA_NI
/// Whether the processor has the SHA extensions (and the SSSE3 and SSE4.1
/// they are used with): 1 or 0, or -1 before the first look.
static int sha_extensions = -1;

static int has_sha_extensions(void) {
    int known = __atomic_load_n(&sha_extensions, __ATOMIC_RELAXED);
    if (known >= 0) return known;
    unsigned int a, b, c, d;
    int found = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 9)) && (c & (1u << 19))) {
        if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29))) found = 1;
    }
    __atomic_store_n(&sha_extensions, found, __ATOMIC_RELAXED);
    return found;
}

/// One block with the SHA extensions: the same function as the portable
/// code below, many times faster (and still fast in a debug build, which
/// compiles C without optimization).
__attribute__((target("sha,ssse3,sse4.1")))
static void sha256_compress_extensions(uint32_t state[8], const uint8_t block[64]) {
    const __m128i byte_order = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    // The state as the instructions want it: ABEF and CDGH.
    __m128i cdab = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xb1);
    __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1b);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xf0);
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i words[4];
    for (int i = 0; i < 4; i++) words[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * i)), byte_order);
    for (int group = 0; group < 16; group++) {
        __m128i current = words[group & 3];
        __m128i message = _mm_add_epi32(current, _mm_loadu_si128((const __m128i *)&sha256_constants[4 * group]));
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(message, 0x0e));
        if (group < 12) {
            // W[t..t+3] for the group four ahead, from W[t-16..t-1].
            __m128i next = _mm_sha256msg1_epu32(current, words[(group + 1) & 3]);
            next = _mm_add_epi32(next, _mm_alignr_epi8(words[(group + 3) & 3], words[(group + 2) & 3], 4));
            words[group & 3] = _mm_sha256msg2_epu32(next, words[(group + 3) & 3]);
        }
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
    // Back to ABCD and EFGH.
    __m128i feba = _mm_shuffle_epi32(abef, 0x1b);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xf0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}
#endif

static void sha256_compress(uint32_t state[8], const uint8_t block[64]) {
#ifdef STRATA_SHA_NI
    if (__atomic_load_n(&sha_extensions_allowed, __ATOMIC_RELAXED) && has_sha_extensions()) {
        sha256_compress_extensions(state, block);
        return;
    }
#endif
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

static void hash_compress_words(strata_digest_function function, uint32_t words[8], const uint8_t block[64]) {
    if (function == STRATA_DIGEST_SHA1) sha1_compress(words, block);
    else sha256_compress(words, block);
}

static void hash_compress(hash_context *context, const uint8_t block[64]) {
    hash_compress_words(context->function, context->state, block);
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

/// A block holding a `length`-byte message that follows one block already
/// hashed (the padded key), padded as the hash's last block: the message's
/// bytes are written into its first `length` bytes for each round.
static void pad_single_block(uint8_t block[64], size_t length) {
    memset(block, 0, 64);
    block[length] = 0x80;
    uint64_t bits = (uint64_t)(64 + length) * 8;
    for (int i = 0; i < 8; i++) block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
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
        // Every later round hashes one digest after a padded key: one
        // block each way, padded once here, so a round is two compressions
        // and a few copies.
        uint8_t inner_block[64], outer_block[64];
        pad_single_block(inner_block, length);
        pad_single_block(outer_block, length);
        uint32_t words[8];
        for (uint32_t round = 1; round < iterations; round++) {
            memcpy(inner_block, u, length);
            memcpy(words, prepared.inner.state, sizeof words);
            hash_compress_words(function, words, inner_block);
            for (size_t i = 0; i < length / 4; i++) store_big_endian(outer_block + 4 * i, words[i]);
            memcpy(words, prepared.outer.state, sizeof words);
            hash_compress_words(function, words, outer_block);
            for (size_t i = 0; i < length / 4; i++) {
                store_big_endian(u + 4 * i, words[i]);
                uint32_t x = words[i];
                t[4 * i] ^= (uint8_t)(x >> 24); t[4 * i + 1] ^= (uint8_t)(x >> 16);
                t[4 * i + 2] ^= (uint8_t)(x >> 8); t[4 * i + 3] ^= (uint8_t)x;
            }
        }
        size_t take = out_length < length ? out_length : length;
        memcpy(out, t, take);
        out += take;
        out_length -= take;
        block_number++;
    }
    return 0;
}
