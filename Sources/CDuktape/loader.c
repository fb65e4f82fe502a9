// Duktape's library opened with dlopen, and an allocator that keeps the
// JavaScript heap within a byte budget. See duk_loader.h.
#include "duk_loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__APPLE__)
#include <malloc/malloc.h>
#define strata_usable_size malloc_size
#else
#include <malloc.h>
#define strata_usable_size malloc_usable_size
#endif

typedef void *(*alloc_function)(void *udata, size_t size);
typedef void *(*realloc_function)(void *udata, void *pointer, size_t size);
typedef void (*free_function)(void *udata, void *pointer);

// duk_peval_lstring's flags: DUK_COMPILE_EVAL | DUK_COMPILE_SAFE |
// DUK_COMPILE_NOSOURCE | DUK_COMPILE_NOFILENAME, stable across Duktape 2.x.
#define STRATA_DUK_PEVAL_FLAGS ((1U << 3) | (1U << 7) | (1U << 9) | (1U << 11))

static struct {
    void *library;
    strata_duk_context *(*create_heap)(alloc_function, realloc_function, free_function, void *, strata_duk_fatal_function);
    void (*destroy_heap)(strata_duk_context *);
    strata_duk_int_t (*eval_raw)(strata_duk_context *, const char *, strata_duk_size_t, unsigned int);
    const char *(*safe_to_lstring)(strata_duk_context *, strata_duk_idx_t, strata_duk_size_t *);
    void (*push_null)(strata_duk_context *);
    const char *(*push_lstring)(strata_duk_context *, const char *, strata_duk_size_t);
    strata_duk_idx_t (*push_c_function)(strata_duk_context *, strata_duk_c_function, strata_duk_idx_t);
    strata_duk_bool_t (*put_global_string)(strata_duk_context *, const char *);
} duk;

static const char *const library_names[] = {
#if defined(__APPLE__)
    "libduktape.dylib",
    "/opt/homebrew/lib/libduktape.dylib",
    "/usr/local/lib/libduktape.dylib",
#else
    "libduktape.so.207",
    "libduktape.so",
#endif
};

static int resolve(void *library, char *error, size_t capacity) {
#define STRATA_RESOLVE(field, symbol)                                                        \
    *(void **)(&duk.field) = dlsym(library, symbol);                                         \
    if (!duk.field) {                                                                        \
        snprintf(error, capacity, "Duktape's library has no %s: it is not Duktape 2", symbol); \
        return 1;                                                                            \
    }
    STRATA_RESOLVE(create_heap, "duk_create_heap")
    STRATA_RESOLVE(destroy_heap, "duk_destroy_heap")
    STRATA_RESOLVE(eval_raw, "duk_eval_raw")
    STRATA_RESOLVE(safe_to_lstring, "duk_safe_to_lstring")
    STRATA_RESOLVE(push_null, "duk_push_null")
    STRATA_RESOLVE(push_lstring, "duk_push_lstring")
    STRATA_RESOLVE(push_c_function, "duk_push_c_function")
    STRATA_RESOLVE(put_global_string, "duk_put_global_string")
#undef STRATA_RESOLVE
    return 0;
}

int strata_duk_load(char *error, size_t capacity) {
    if (duk.library) return 0;
    const char *chosen = getenv("STRATA_DUKTAPE_LIBRARY");
    char tried[1024] = "";
    size_t count = sizeof(library_names) / sizeof(library_names[0]);
    for (size_t i = (chosen && *chosen) ? 0 : 1; i <= count; i++) {
        const char *name = i == 0 ? chosen : library_names[i - 1];
        void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            const char *reason = dlerror();
            size_t used = strlen(tried);
            snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? "; " : "", reason ? reason : name);
            if (i == 0) break;  // an explicit choice that fails is reported as such
            continue;
        }
        if (resolve(library, error, capacity) != 0) {
            dlclose(library);
            return 1;
        }
        duk.library = library;
        return 0;
    }
    snprintf(error, capacity, "%s", tried);
    return 1;
}

// MARK: - The heap's byte budget

static size_t heap_used = 0;
static size_t heap_limit = 0;

static void *budget_alloc(void *udata, size_t size) {
    (void)udata;
    if (heap_limit && heap_used + size > heap_limit) return NULL;
    void *pointer = malloc(size);
    if (pointer) heap_used += strata_usable_size(pointer);
    return pointer;
}

static void budget_free(void *udata, void *pointer) {
    (void)udata;
    if (!pointer) return;
    heap_used -= strata_usable_size(pointer);
    free(pointer);
}

static void *budget_realloc(void *udata, void *pointer, size_t size) {
    if (size == 0) {
        budget_free(udata, pointer);
        return NULL;
    }
    size_t old = pointer ? strata_usable_size(pointer) : 0;
    if (heap_limit && size > old && heap_used - old + size > heap_limit) return NULL;
    void *moved = realloc(pointer, size);
    if (moved) heap_used = heap_used - old + strata_usable_size(moved);
    return moved;
}

// MARK: - The calls

strata_duk_context *strata_duk_create_heap(size_t limit, strata_duk_fatal_function fatal) {
    if (!duk.library) return NULL;
    heap_limit = limit;
    return duk.create_heap(budget_alloc, budget_realloc, budget_free, NULL, fatal);
}

void strata_duk_destroy_heap(strata_duk_context *ctx) { duk.destroy_heap(ctx); }

strata_duk_int_t strata_duk_peval(strata_duk_context *ctx, const char *source, strata_duk_size_t length) {
    return duk.eval_raw(ctx, source, length, STRATA_DUK_PEVAL_FLAGS);
}

const char *strata_duk_safe_to_lstring(strata_duk_context *ctx, strata_duk_idx_t index, strata_duk_size_t *length) {
    return duk.safe_to_lstring(ctx, index, length);
}

void strata_duk_push_null(strata_duk_context *ctx) { duk.push_null(ctx); }

const char *strata_duk_push_lstring(strata_duk_context *ctx, const char *text, strata_duk_size_t length) {
    return duk.push_lstring(ctx, text, length);
}

strata_duk_bool_t strata_duk_define_global(strata_duk_context *ctx, const char *name, strata_duk_c_function function, strata_duk_idx_t arguments) {
    duk.push_c_function(ctx, function, arguments);
    return duk.put_global_string(ctx, name);
}
