/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Short names for the C11 atomics the runtime uses.  Fields that ULE reads
 * without the owning lock (tdq_load, tdq_lowpri, tdq_cpu_idle, ...) are
 * _Atomic and accessed relaxed: the algorithm tolerates stale values, and
 * declaring them keeps the sanitizers and the compiler honest.
 */
#ifndef ULT_UTIL_ATOMIC_H
#define ULT_UTIL_ATOMIC_H

#include <stdatomic.h>

#define ULT_LD(p) atomic_load_explicit((p), memory_order_relaxed)
#define ULT_ST(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define ULT_LD_ACQ(p) atomic_load_explicit((p), memory_order_acquire)
#define ULT_ST_REL(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define ULT_ADD(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define ULT_SUB(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define ULT_XCHG(p, v) atomic_exchange_explicit((p), (v), memory_order_relaxed)
/*
 * Sequentially consistent, for the Dekker pairs (each side stores, then
 * loads the other's word) and for claims whose winner must see what the
 * loser wrote before.  Every use says, in a comment, which access on the
 * other side it pairs with.
 */
#define ULT_LD_SC(p) atomic_load_explicit((p), memory_order_seq_cst)
#define ULT_ST_SC(p, v) atomic_store_explicit((p), (v), memory_order_seq_cst)
#define ULT_XCHG_SC(p, v) \
	atomic_exchange_explicit((p), (v), memory_order_seq_cst)
#define ULT_ADD_SC(p, v) \
	atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define ULT_CAS_SC(p, expp, v)                                    \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), \
	    memory_order_seq_cst, memory_order_seq_cst)
#define ULT_CASW_SC(p, expp, v)                                 \
	atomic_compare_exchange_weak_explicit((p), (expp), (v), \
	    memory_order_seq_cst, memory_order_seq_cst)
#if defined(__SANITIZE_THREAD__)
/* TSan does not model fences (GCC refuses them); a seq_cst read-modify-
 * write of one shared word orders the same way and is modelled. */
extern atomic_int ult__tsan_fence;
#define ULT_FENCE()                                           \
	((void)atomic_fetch_add_explicit(&ult__tsan_fence, 0, \
	    memory_order_seq_cst))
#else
#define ULT_FENCE() atomic_thread_fence(memory_order_seq_cst)
#endif
/* Release and acquire fences (TSan models these): a seqlock's writer
 * orders its odd count before the data it then stores, its reader the
 * data it loaded before its second count. */
#define ULT_FENCE_REL() atomic_thread_fence(memory_order_release)
#define ULT_FENCE_ACQ() atomic_thread_fence(memory_order_acquire)

/*
 * The same for plain objects, which C11's atomic_* cannot take: the sync
 * objects' words live in public structs that stay free of <stdatomic.h>,
 * and struct thread's priority bytes are written under the thread lock
 * but read without it.  The compilers and sanitizers treat these
 * builtins as atomics too.
 */
#define ULT_PLD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define ULT_PLD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ULT_PST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ULT_PST_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* Compare-and-swap; *expp gets the value seen.  _ACQ acquires on
 * success, _ACQREL also releases (a mutex owner installing its identity:
 * a waiter that reads it touches the owner's thread, which must be seen
 * initialised), _REL only releases, the plain one is sequentially
 * consistent. */
#define ULT_PCAS_ACQ(p, expp, v)                                           \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_ACQUIRE, \
	    __ATOMIC_RELAXED)
#define ULT_PCAS_ACQREL(p, expp, v)                                        \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_ACQ_REL, \
	    __ATOMIC_RELAXED)
#define ULT_PCAS_REL(p, expp, v)                                           \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_RELEASE, \
	    __ATOMIC_RELAXED)
#define ULT_PCAS(p, expp, v)                                               \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_SEQ_CST, \
	    __ATOMIC_SEQ_CST)
/* The same with other orders: _RLX relaxed both ways; _ACQ_ACQ and
 * _ACQREL_ACQ also acquire on failure (the value seen is used). */
#define ULT_PCAS_RLX(p, expp, v)                                           \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_RELAXED, \
	    __ATOMIC_RELAXED)
#define ULT_PCAS_ACQ_ACQ(p, expp, v)                                       \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_ACQUIRE, \
	    __ATOMIC_ACQUIRE)
#define ULT_PCAS_ACQREL_ACQ(p, expp, v)                                    \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_ACQ_REL, \
	    __ATOMIC_ACQUIRE)
/* Sequentially consistent loads and stores of plain objects; each use
 * names the access it pairs with. */
#define ULT_PLD_SC(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ULT_PST_SC(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
/* Read-modify-writes of plain objects: the _FETCH forms return the new
 * value, FETCH_ the old one; the suffix is the order (none: relaxed). */
#define ULT_PADD_FETCH(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define ULT_PADD_FETCH_SC(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define ULT_PSUB_FETCH(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_RELAXED)
#define ULT_PSUB_FETCH_REL(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_RELEASE)
#define ULT_PSUB_FETCH_ACQREL(p, v) \
	__atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)
#define ULT_PFETCH_SUB_SC(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_SEQ_CST)
#define ULT_PXCHG(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)
#define ULT_PXCHG_ACQ(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define ULT_PXCHG_ACQREL(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define ULT_PFETCH_AND(p, v) __atomic_fetch_and((p), (v), __ATOMIC_RELAXED)
#define ULT_PFETCH_AND_ACQ(p, v) __atomic_fetch_and((p), (v), __ATOMIC_ACQUIRE)
#define ULT_PFETCH_AND_ACQREL(p, v) \
	__atomic_fetch_and((p), (v), __ATOMIC_ACQ_REL)
#define ULT_PFETCH_OR(p, v) __atomic_fetch_or((p), (v), __ATOMIC_RELAXED)
#define ULT_PFETCH_OR_REL(p, v) __atomic_fetch_or((p), (v), __ATOMIC_RELEASE)
#define ULT_PFETCH_OR_ACQREL(p, v) __atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL)

#define ULT_LIKELY(x) __builtin_expect(!!(x), 1)
#define ULT_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define ULT_CACHELINE 64
#define ULT_ALIGNED_CL __attribute__((aligned(ULT_CACHELINE)))

#endif
