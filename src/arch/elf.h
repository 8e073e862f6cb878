/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ELF machine of the programs this build runs (ult-run refuses the
 * others: its preloaded library could not be loaded into them).
 */
#ifndef ULT_ARCH_ELF_H
#define ULT_ARCH_ELF_H

#include <elf.h>

#if defined(__x86_64__)
#define ULT_ELF_MACHINE EM_X86_64
#define ULT_ARCH_NAME "x86-64"
#elif defined(__aarch64__)
#define ULT_ELF_MACHINE EM_AARCH64
#define ULT_ARCH_NAME "AArch64"
#else
#error "ult-run: no ELF machine for this architecture"
#endif

#endif
