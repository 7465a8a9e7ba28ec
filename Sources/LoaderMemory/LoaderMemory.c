#define _GNU_SOURCE // dl_iterate_phdr
#include "LoaderMemory.h"

#include <stdlib.h> // defines __GLIBC__ where the C library is glibc
#ifdef __GLIBC__
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

struct table {
    uintptr_t start;
    uintptr_t end;
};

/// The first object dl_iterate_phdr reports is the program itself.
static int find_relocations(struct dl_phdr_info *info, size_t size, void *found) {
    (void)size;
    struct table *table = found;
    const ElfW(Dyn) *dynamic = NULL;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        if (info->dlpi_phdr[index].p_type == PT_DYNAMIC) {
            dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[index].p_vaddr);
        }
    }
    uintptr_t address = 0, length = 0;
    for (; dynamic != NULL && dynamic->d_tag != DT_NULL; dynamic++) {
        if (dynamic->d_tag == DT_RELA) address = dynamic->d_un.d_ptr;
        if (dynamic->d_tag == DT_RELASZ) length = dynamic->d_un.d_val;
    }
    if (address == 0 || length == 0) return 1;
    // glibc rewrites DT_RELA to an address once it has loaded the program; the file holds
    // an offset from the load address.
    if (address < info->dlpi_addr) address += info->dlpi_addr;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[index];
        uintptr_t segment_start = info->dlpi_addr + segment->p_vaddr;
        if (segment->p_type == PT_LOAD && !(segment->p_flags & PF_W) && address >= segment_start
            && address + length <= segment_start + segment->p_filesz) {
            table->start = address;
            table->end = address + length;
        }
    }
    return 1;
}

loader_memory_pages loader_memory_release_relocations(void) {
    loader_memory_pages released = {0, 0};
    struct table table = {0, 0};
    dl_iterate_phdr(find_relocations, &table);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (table.start + page - 1) & ~(page - 1);
    uintptr_t last = table.end & ~(page - 1);
    if (table.end != 0 && last > first && madvise((void *)first, last - first, MADV_DONTNEED) == 0) {
        released.start = first;
        released.length = last - first;
    }
    return released;
}
#else
loader_memory_pages loader_memory_release_relocations(void) {
    loader_memory_pages none = {0, 0};
    return none;
}
#endif
