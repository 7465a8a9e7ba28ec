// glibc's allocator settings, which Swift's Glibc module does not expose (malloc.h).
#ifndef MALLOC_TUNING_H
#define MALLOC_TUNING_H

#include <stdlib.h> // defines __GLIBC__ where the C library is glibc
#ifdef __GLIBC__
#include <malloc.h>
#endif

/// Blocks of `bytes` and more are mapped on their own and unmapped when freed, whatever
/// was freed before: glibc otherwise raises this threshold to the largest mapped block
/// freed (up to 32 MB), and big temporary buffers then come from heaps that keep the
/// memory. Does nothing where the C library is not glibc.
static inline void malloc_tuning_fix_mmap_threshold(int bytes) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
#endif
}

/// At most `arenas` heaps, however many threads allocate (glibc otherwise makes up to eight
/// per core, each keeping its own free memory). Does nothing where the C library is not glibc.
static inline void malloc_tuning_limit_arenas(int arenas) {
#ifdef __GLIBC__
    mallopt(M_ARENA_MAX, arenas);
#else
    (void)arenas;
#endif
}

#endif
