// Duktape 2.x, loaded at run time.
//
// Strata does not compile against Duktape's headers: the query server opens
// Duktape's shared library (Debian's libduktape207, Homebrew's duktape) when
// it starts, so building Strata needs no header package and a machine
// without the library still builds, tests and serves everything but
// JavaScript. The few declarations below are written from Duktape's
// documented C API (duktape.org/api.html) for the calls Strata makes; the
// types match duk_config.h on platforms where `int` has 32 bits.
#ifndef STRATA_DUK_LOADER_H
#define STRATA_DUK_LOADER_H

#include <stddef.h>

typedef struct strata_duk_context strata_duk_context;
typedef int strata_duk_int_t;
typedef int strata_duk_idx_t;
typedef int strata_duk_ret_t;
typedef unsigned int strata_duk_bool_t;
typedef size_t strata_duk_size_t;

typedef strata_duk_ret_t (*strata_duk_c_function)(strata_duk_context *ctx);
typedef void (*strata_duk_fatal_function)(void *udata, const char *msg);

/// Opens Duktape's shared library and resolves the functions Strata calls.
/// Answers 0 when it is ready; otherwise 1, with what went wrong (the paths
/// tried and the loader's message) in `error`. Tries $STRATA_DUKTAPE_LIBRARY
/// first, then the names Debian and Homebrew install. Safe to call again.
int strata_duk_load(char *error, size_t capacity);

/// A heap whose allocations fail once `limit` bytes are in use (0: none).
strata_duk_context *strata_duk_create_heap(size_t limit, strata_duk_fatal_function fatal);
void strata_duk_destroy_heap(strata_duk_context *ctx);

/// Evaluates source text: 0 with the result on the stack, else the error on
/// the stack (duk_peval_lstring).
strata_duk_int_t strata_duk_peval(strata_duk_context *ctx, const char *source, strata_duk_size_t length);

/// The value at `index` as text, never throwing (duk_safe_to_lstring).
const char *strata_duk_safe_to_lstring(strata_duk_context *ctx, strata_duk_idx_t index, strata_duk_size_t *length);

void strata_duk_push_null(strata_duk_context *ctx);
const char *strata_duk_push_lstring(strata_duk_context *ctx, const char *text, strata_duk_size_t length);
/// Defines a global function named `name` backed by `function`.
strata_duk_bool_t strata_duk_define_global(strata_duk_context *ctx, const char *name, strata_duk_c_function function, strata_duk_idx_t arguments);

#endif
