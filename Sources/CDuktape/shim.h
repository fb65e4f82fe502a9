// Duktape (Debian's duktape-dev, 2.7): the ES5 engine the query server
// runs design-document functions in. Some of its API is macros, which
// Swift cannot call; these inline functions stand in for the ones used,
// and an allocator that keeps the heap within a byte budget.
#include <duktape.h>
#include <malloc.h>
#include <stdlib.h>

static size_t strata_duk_used = 0;
static size_t strata_duk_limit = 0;

static inline void *strata_duk_alloc(void *udata, duk_size_t size) {
    (void)udata;
    if (strata_duk_limit && strata_duk_used + size > strata_duk_limit) return NULL;
    void *pointer = malloc(size);
    if (pointer) strata_duk_used += malloc_usable_size(pointer);
    return pointer;
}

static inline void strata_duk_free(void *udata, void *pointer) {
    (void)udata;
    if (!pointer) return;
    strata_duk_used -= malloc_usable_size(pointer);
    free(pointer);
}

static inline void *strata_duk_realloc(void *udata, void *pointer, duk_size_t size) {
    if (size == 0) {
        strata_duk_free(udata, pointer);
        return NULL;
    }
    size_t old = pointer ? malloc_usable_size(pointer) : 0;
    if (strata_duk_limit && size > old && strata_duk_used - old + size > strata_duk_limit) return NULL;
    void *moved = realloc(pointer, size);
    if (moved) strata_duk_used = strata_duk_used - old + malloc_usable_size(moved);
    return moved;
}

/// A heap whose allocations fail once `limit` bytes are in use (0: none).
static inline duk_context *strata_duk_create_heap(size_t limit, duk_fatal_function fatal) {
    strata_duk_limit = limit;
    return duk_create_heap(strata_duk_alloc, strata_duk_realloc, strata_duk_free, NULL, fatal);
}

/// Evaluates source text; 0 on success with the result on the stack, else
/// the error on the stack.
static inline duk_int_t strata_duk_peval(duk_context *ctx, const char *source, duk_size_t length) {
    return duk_peval_lstring(ctx, source, length);
}

static inline const char *strata_duk_safe_to_string(duk_context *ctx, duk_idx_t index) {
    return duk_safe_to_string(ctx, index);
}
