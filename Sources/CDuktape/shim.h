// Duktape (Debian's duktape-dev, 2.7): the ES5 engine the query server
// runs design-document functions in. Some of its API is macros, which
// Swift cannot call; these inline functions stand in for the ones used.
#include <duktape.h>

static inline duk_context *strata_duk_create_heap(duk_fatal_function fatal) {
    return duk_create_heap(NULL, NULL, NULL, NULL, fatal);
}

/// Evaluates source text; 0 on success with the result on the stack, else
/// the error on the stack.
static inline duk_int_t strata_duk_peval(duk_context *ctx, const char *source, duk_size_t length) {
    return duk_peval_lstring(ctx, source, length);
}

static inline const char *strata_duk_safe_to_string(duk_context *ctx, duk_idx_t index) {
    return duk_safe_to_string(ctx, index);
}
