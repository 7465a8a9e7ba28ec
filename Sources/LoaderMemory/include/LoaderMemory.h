// Memory the dynamic loader uses once, before main, and keeps mapped for the whole run.
#ifndef LOADER_MEMORY_H
#define LOADER_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/// The pages given back: whole pages, `length` bytes from `start`; 0 and 0 when none were.
typedef struct {
    uintptr_t start;
    size_t length;
} loader_memory_pages;

/// Gives back the resident pages of the program's relocation table (`.rela.dyn`, about 3.5 MB
/// in the release build): the loader reads all of it once, before main, to fix up the
/// addresses a position-independent program holds, and nothing reads it again. The pages
/// are clean pages of the program file, so the kernel reads one back from the file should
/// anything touch it. Only whole pages inside the table go, and only where the table lies
/// in a segment the program cannot write. Does nothing where the C library is not glibc or
/// the program has no such table.
loader_memory_pages loader_memory_release_relocations(void);

#endif
