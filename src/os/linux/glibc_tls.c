/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Thread blocks for uthreads on glibc, x86-64 and AArch64 (see
 * glibc_tls.h and DESIGN.md section 10).
 *
 * A block comes from ld.so's _dl_allocate_tls, the allocator glibc uses
 * for its own threads: the static TLS of every module (images copied)
 * below a zeroed struct pthread, and a dtv for dynamic TLS.  The
 * descriptor is then filled in as pthread_create would: process-wide
 * words (canaries, multiple_threads) copied, self pointers, lists and
 * resolver state of its own, the rseq area marked unregistered.  The
 * layout of struct pthread is glibc's private business, so m_pthread
 * below mirrors glibc 2.36's field names and types only, and the probe
 * refuses to go on unless every offset glibc describes for libthread_db
 * (_thread_db_*), and every one measured on a fresh thread, agrees with
 * the mirror.
 *
 * x86-64 uses TLS variant II: the thread pointer is the descriptor, whose
 * head is the TCB, and static TLS lies below it.  AArch64 uses variant I:
 * the thread pointer names a two-word TCB (the dtv and a spare), static
 * TLS lies above it and struct pthread right below it (glibc's
 * TLS_PRE_TCB_SIZE), whose head is then two ints in 24 words of padding.
 * PD() and DTV() below hide the difference.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <netdb.h>
#include <pthread.h>
#include <resolv.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unwind.h>
/* After resolv.h, whose arpa/nameser.h renames p_type (an ELF field). */
#undef p_type
#include <link.h>
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define HAVE_RSEQ_H 1
#endif

#include "glibc_tls.h"
#include "../../util/lock.h"

#include "../../arch/tp.h"

#if defined(ULT_ARCH_TP) && defined(HAVE_RSEQ_H)

/* ---- glibc 2.36's struct pthread (nptl/descr.h), names and types ---- */

struct m_list {
	struct m_list *next, *prev;
};

struct m_robust_head {
	void *list;
	long futex_offset;
	void *list_op_pending;
};

struct m_key_data {
	uintptr_t seq;
	void *data;
};

struct m_key_struct {
	uintptr_t seq; /* odd: in use */
	void (*destr)(void *);
};

#if ULT_TLS_VARIANT == 2
struct m_tcbhead {
	void *tcb, *dtv, *self;
	int multiple_threads, gscope_flag;
	uintptr_t sysinfo, stack_guard, pointer_guard;
	unsigned long unused_vgetcpu_cache[2];
	unsigned feature_1;
	int unused1;
	void *private_tm[4];
	void *private_ss;
	unsigned long long ssp_base;
	struct {
		int i[4];
	} unused2[8][4] __attribute__((aligned(32)));
	void *padding[8];
};
#else
union m_tcbhead {
	struct {
		int multiple_threads, gscope_flag;
	};
	void *padding[24];
};
#endif

struct m_pthread {
#if ULT_TLS_VARIANT == 2
	struct m_tcbhead header;
#else
	union m_tcbhead header;
#endif
	struct m_list list;
	pid_t tid;
	void *robust_prev;
	struct m_robust_head robust_head;
	void *cleanup, *cleanup_jmp_buf;
	int cancelhandling, flags;
	struct m_key_data specific_1stblock[32];
	struct m_key_data *specific[32];
	bool specific_used, report_events, user_stack, stopped_start;
	int setup_failed, lock;
	unsigned setxid_futex;
	void *joinid, *result;
	struct sched_param schedparam;
	int schedpolicy;
	void *(*start_routine)(void *);
	void *arg;
	struct {
		uint32_t event_bits[2];
		int eventnum;
		void *eventdata;
	} eventbuf;
	void *nextevent;
	struct _Unwind_Exception exc;
	void *stackblock;
	size_t stackblock_size, guardsize, reported_guardsize;
	void *tpp;
	struct __res_state res;
	unsigned long sigmask;
	bool c11, exiting;
	int exit_lock;
	struct {
		char *strsignal_buf, *strerror_l_buf;
	} tls_state;
	struct rseq rseq_area;
} __attribute__((aligned(64)));

/* A dtv slot; dtv[-1].counter is the number of module slots. */
union m_dtv {
	size_t counter;
	struct {
		void *val, *to_free;
	} p;
};

#define M_OFF(f) ((long)offsetof(struct m_pthread, f))
#if ULT_TLS_VARIANT == 2
#define M_PRE 0l /* the descriptor is at the thread pointer */
#define DTV(tp) (((struct m_pthread *)(tp))->header.dtv)
#else
#define M_PRE ((long)sizeof(struct m_pthread)) /* right below it */
#define DTV(tp) (((void **)(tp))[0])	       /* the TCB's first word */
#endif
/* A block's descriptor, and an offset in it from the thread pointer. */
#define PD(tp) ((struct m_pthread *)(void *)((char *)(tp)-M_PRE))
#define M_TP(f) (M_OFF(f) - M_PRE)
#define DTV_UNALLOCATED ((void *)-1l)
#define SIGSETXID 33		      /* glibc's, __SIGRTMIN + 1 */
#define X86_FEATURE_1_SHSTK (1u << 1) /* CET shadow stack in feature_1 */
#define HEAP_MAX (64ul << 20)	      /* malloc's non-main heaps' alignment */
#define NON_MAIN_ARENA 0x4ul	      /* chunk size bit */
#define TCACHE_BINS 64
#define MAXMODS 32

struct ult__glibc_tls ult__glibc_tls;

/* glibc's private entry points (dlvsym, version GLIBC_PRIVATE). */
static struct {
	void *(*allocate_tls)(void *);
	void (*deallocate_tls)(void *, bool);
	void (*get_tls_static_info)(size_t *, size_t *);
	void (*call_tls_dtors)(void);
	void (*ctype_init)(void);
	struct m_key_struct *keys;
} g;

static const char *slab_geometry(size_t size, size_t align);

struct m_tls_index {
	unsigned long mod, off;
};
/* ld.so's __tls_get_addr, found by the probe (a static link cannot name
 * it even weakly, and has no blocks). */
static void *(*tls_get_addr)(struct m_tls_index *);

/* Found by the probe.  Offsets are from the thread pointer. */
static long off_resp, off_dlerror, off_rseq;
static size_t static_size;
static struct m_pthread tmpl; /* a fresh thread's descriptor */
static struct {
	long off;	   /* the module's block, from tp */
	const void *image; /* its PT_TLS initialisation image */
	size_t filesz, memsz;
} mods[MAXMODS];
static int nmods;
/* The modules' blocks as one range from tp, [span_lo, span_lo + span_len), and
 * its initial contents (the images at their offsets, zeros between): a reset is
 * then one copy instead of two calls per module.  NULL when the range is larger
 * than SPAN_MAX. */
#define SPAN_MAX 4096
static long span_lo;
static size_t span_len;
static unsigned char *span_image;
/* Modules with dynamic TLS when the probe ran, and the dtv generation of
 * a thread made then (see ult__glibc_tls_reset). */
static int ndynamic;
static size_t base_gen;

static void *
priv(const char *name)
{
	return (dlvsym(RTLD_DEFAULT, name, "GLIBC_PRIVATE"));
}

/* A _thread_db_ descriptor's offset ({bits, count, offset}), or -1. */
static long
tdb_off(const char *name)
{
	const uint32_t *d = priv(name);

	return (d != NULL ? (long)d[2] : -1);
}

/* [p, p + len) is mapped: the probe reads words that may not be pointers. */
static int
mapped(const void *p, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(pg - 1), e = (uintptr_t)p + len;
	unsigned char v[4];

	if (a == 0 || e < a || e - a > sizeof(v) * pg)
		return (0);
	return (mincore((void *)a, e - a, v) == 0);
}

/* ---- the probe ---- */

static struct {
	char *tp;
	const char *why;
	long libc_lo, libc_hi, libc_tdata_hi; /* libc's static TLS, from tp */
} pr;

/*
 * Between and around the modules' blocks lies only alignment padding,
 * which nothing writes (glibc places static TLS for modules loaded later
 * past all of these), so the span can be rewritten whole.
 */
static void
build_span(void)
{
	long lo, hi;
	size_t len;

	if (nmods == 0)
		return;
	lo = mods[0].off;
	hi = mods[0].off + (long)mods[0].memsz;
	for (int i = 1; i < nmods; i++) {
		if (mods[i].off < lo)
			lo = mods[i].off;
		if (mods[i].off + (long)mods[i].memsz > hi)
			hi = mods[i].off + (long)mods[i].memsz;
	}
#if ULT_TLS_VARIANT == 2
	if (hi > 0 || hi <= lo || hi - lo > SPAN_MAX)
		return;
#else
	if (lo < ULT_TLS_TCB_SIZE || hi <= lo || hi - lo > SPAN_MAX)
		return;
#endif
	len = (size_t)(hi - lo);
	if ((span_image = calloc(1, len)) == NULL)
		return;
	for (int i = 0; i < nmods; i++)
		memcpy(span_image + (mods[i].off - lo), mods[i].image,
		    mods[i].filesz);
	span_lo = lo;
	span_len = len;
}

/* Static TLS: below tp in variant II, above the TCB in variant I. */
static int
in_static_tls(const char *d)
{
#if ULT_TLS_VARIANT == 2
	return (d < pr.tp && d >= pr.tp - (long)static_size);
#else
	return (d >= pr.tp + ULT_TLS_TCB_SIZE && d < pr.tp + (long)static_size);
#endif
}

static int
find_libc_and_mods(struct dl_phdr_info *info, size_t sz, void *arg)
{
	const char *libc = arg;

	(void)sz;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		char *d = info->dlpi_tls_data;

		if (ph->p_type != PT_TLS)
			continue;
		/* Dynamic TLS is the dtv's business, not the block's. */
		if (d == NULL || !in_static_tls(d)) {
			ndynamic++;
			continue;
		}
		if (strcmp(info->dlpi_name, libc) == 0) {
			pr.libc_lo = d - pr.tp;
			pr.libc_hi = pr.libc_lo + (long)ph->p_memsz;
			pr.libc_tdata_hi = pr.libc_lo + (long)ph->p_filesz;
		}
		if (nmods == MAXMODS)
			return (1);
		mods[nmods].off = d - pr.tp;
		mods[nmods].image = (const char *)info->dlpi_addr + ph->p_vaddr;
		mods[nmods].filesz = ph->p_filesz;
		mods[nmods].memsz = ph->p_memsz;
		nmods++;
	}
	return (0);
}

/*
 * libc's `tcache' and `thread_arena' are static __thread variables in its
 * TLS block.  tcache: after free(p) of a small chunk it points to a
 * structure whose first count is at least 1 and whose first entry is p,
 * and a malloc of the same size returns p and lowers the count.  The
 * arena word is the one non-zero pointer left in libc's .tbss that no
 * exported variable or accessor explains; when the chunk came from a
 * non-main arena, that arena's heap header must name it too.  Any doubt
 * leaves both at 0.  Through volatile pointers: the compiler deletes
 * malloc/free pairs it can see.
 */
static void
probe_malloc(char *tp)
{
	void *(*volatile m)(size_t) = malloc;
	void (*volatile f)(void *) = free;
	long known[8], lo = (pr.libc_lo + 7) & ~7l, tc = 0, arena = 0;
	void *p = m(24), *q, *heap_arena = NULL;
	int n = 0, nk = 0;

	if (p == NULL)
		return;
	/* Another allocator's block (jemalloc's) has no chunk header: the
	 * words read here may not be mapped. */
	if (mapped((const size_t *)p - 1, sizeof(size_t)) &&
	    (((const size_t *)p)[-1] & NON_MAIN_ARENA) &&
	    mapped((void *)((uintptr_t)p & ~(HEAP_MAX - 1)), sizeof(void *)))
		heap_arena = *(void **)((uintptr_t)p & ~(HEAP_MAX - 1));
	f(p);
	for (long o = lo; o + 8 <= pr.libc_hi && tc == 0; o += 8) {
		uint16_t *counts = *(uint16_t **)(tp + o);
		unsigned c;

		if (((uintptr_t)counts & 15) != 0 ||
		    !mapped(counts, TCACHE_BINS * (2 + sizeof(void *))) ||
		    ((void **)(counts + TCACHE_BINS))[0] != p || counts[0] == 0)
			continue;
		c = counts[0];
		q = m(24);
		if (q == p && counts[0] == c - 1)
			tc = o;
		f(q);
	}
	if (tc == 0)
		return;
	known[nk++] = tc;
	known[nk++] = ((char *)__errno_location() - tp) & ~7l;
	known[nk++] = ((char *)__h_errno_location() - tp) & ~7l;
	known[nk++] = (char *)__ctype_b_loc() - tp;
	known[nk++] = (char *)__ctype_tolower_loc() - tp;
	known[nk++] = (char *)__ctype_toupper_loc() - tp;
	known[nk++] = off_dlerror;
	for (long o = (pr.libc_tdata_hi + 7) & ~7l; o + 8 <= pr.libc_hi;
	     o += 8) {
		void *v = *(void **)(tp + o);
		int k = 0;

		for (int i = 0; i < nk; i++)
			k |= known[i] == o;
		if (k || v == NULL || ((uintptr_t)v & 7) != 0 ||
		    !mapped(v, sizeof(void *)))
			continue;
		arena = o;
		n++;
	}
	if (n != 1 ||
	    (heap_arena != NULL && *(void **)(tp + arena) != heap_arena))
		return;
	ult__glibc_tls.tcache = tc;
	ult__glibc_tls.arena = arena;
}

/* On a thread glibc's start_thread set up, as a block must look. */
static void *
probe_thread(void *arg)
{
	struct m_pthread *pd;
	struct m_robust_head *rh;
	char **resp;
	size_t len;

	(void)arg;
	pr.tp = ult__tp();
	pd = PD(pr.tp);
	resp = priv("__resp"); /* this thread's instance */
	if (pd->tid != gettid())
		pr.why = "the thread pointer is not the descriptor's";
#if ULT_TLS_VARIANT == 2
	else if (pd->header.self != pd)
		pr.why = "the thread pointer is not the descriptor";
#endif
	/* qemu-user implements no robust lists (ENOSYS): the other offsets
	 * are checked all the same. */
	else if (syscall(SYS_get_robust_list, 0, &rh, &len) != 0
		? errno != ENOSYS
		: (char *)rh != (char *)&pd->robust_head)
		pr.why = "the robust list is not where the descriptor's is";
	else if (resp == NULL || *resp != (char *)&pd->res)
		pr.why = "the resolver state is not where the descriptor's is";
#if ULT_TLS_VARIANT == 2
	else if (pd->header.feature_1 & X86_FEATURE_1_SHSTK)
		pr.why = "a CET shadow stack is enabled";
#endif
	if (pr.why != NULL)
		return (NULL);
	off_resp = (char *)resp - pr.tp;
	memcpy(&tmpl, pd, sizeof(tmpl));
	base_gen = ((union m_dtv *)DTV(pr.tp))[0].counter;
	nmods = ndynamic = 0;
	pr.libc_lo = pr.libc_hi = 0;
	{
		Dl_info di;

		if (dladdr((void *)gnu_get_libc_version, &di) == 0 ||
		    dl_iterate_phdr(find_libc_and_mods, (void *)di.dli_fname))
			pr.why = "too many modules with static TLS";
		else if (pr.libc_hi == 0)
			pr.why = "libc's TLS block was not found";
	}
	if (pr.why == NULL)
		probe_malloc(pr.tp);
	if (pr.why == NULL)
		build_span();
	return (NULL);
}

/* malloc is glibc's own, not an interposed allocator (glibc's malloc is
 * an alias of __libc_malloc). */
static int
malloc_is_glibc(void)
{
	void *m = dlsym(RTLD_DEFAULT, "malloc");

	return (m != NULL && m == dlsym(RTLD_DEFAULT, "__libc_malloc"));
}

const char *
ult__glibc_tls_probe(void)
{
	static char vbuf[96];
	const char *why;
	const ptrdiff_t *rseq_off;
	const uint32_t *sz;
	pthread_t t;
	size_t align;
	const struct {
		const char *name;
		long want;
	} tdb[] = {
		{"_thread_db_pthread_tid", M_OFF(tid)},
		{"_thread_db_pthread_list", M_OFF(list)},
		{"_thread_db_pthread_specific", M_OFF(specific)},
		{"_thread_db_pthread_cancelhandling", M_OFF(cancelhandling)},
		{"_thread_db_pthread_report_events", M_OFF(report_events)},
		{"_thread_db_pthread_start_routine", M_OFF(start_routine)},
		{"_thread_db_pthread_eventbuf", M_OFF(eventbuf)},
#if ULT_TLS_VARIANT == 2
		{"_thread_db_pthread_dtvp", M_OFF(header.dtv)},
#else
		/* glibc describes the TCB's dtv as if it were a field past the
		 * descriptor's end (TLS_PRE_TCB_SIZE + 0). */
		{"_thread_db_pthread_dtvp", M_PRE},
#endif
		{"_thread_db_pthread_schedpolicy", M_OFF(schedpolicy)},
		{"_thread_db_pthread_key_struct_destr",
		    offsetof(struct m_key_struct, destr)},
		{"_thread_db_pthread_key_data_data",
		    offsetof(struct m_key_data, data)},
	};

	if (strcmp(gnu_get_libc_version(), "2.36") != 0) {
		snprintf(vbuf, sizeof(vbuf),
		    "glibc %s (this build knows 2.36's descriptor)",
		    gnu_get_libc_version());
		return (vbuf);
	}
	g.allocate_tls = priv("_dl_allocate_tls");
	g.deallocate_tls = priv("_dl_deallocate_tls");
	g.get_tls_static_info = priv("_dl_get_tls_static_info");
	g.call_tls_dtors = priv("__call_tls_dtors");
	g.ctype_init = priv("__ctype_init");
	g.keys = priv("__pthread_keys");
	rseq_off = dlvsym(RTLD_DEFAULT, "__rseq_offset", "GLIBC_2.35");
	if (g.allocate_tls == NULL || g.deallocate_tls == NULL ||
	    g.get_tls_static_info == NULL || g.call_tls_dtors == NULL ||
	    g.ctype_init == NULL || g.keys == NULL || rseq_off == NULL ||
	    priv("__resp") == NULL)
		return ("a private glibc entry point is missing");
	sz = priv("_thread_db_sizeof_pthread");
	if (sz == NULL || *sz != sizeof(struct m_pthread))
		return ("struct pthread is not the size this build knows");
	for (size_t i = 0; i < sizeof(tdb) / sizeof(tdb[0]); i++)
		if (tdb_off(tdb[i].name) != tdb[i].want)
			return ("struct pthread is not laid out as this build "
				"knows");
	if (*rseq_off != M_TP(rseq_area))
		return ("the rseq area is not where this build knows");
	off_rseq = (long)*rseq_off;
	off_dlerror = 0;
	g.get_tls_static_info(&static_size, &align);
	*(void **)&tls_get_addr = dlsym(RTLD_DEFAULT, "__tls_get_addr");
	if ((why = slab_geometry(static_size, align)) != NULL)
		return (why);
	memset(&ult__glibc_tls, 0, sizeof(ult__glibc_tls));
	ult__glibc_tls.tid = M_TP(tid);
	memset(&pr, 0, sizeof(pr));
	/* dlvsym of a TLS variable gives the calling thread's instance. */
	{
		char *dle = priv("__libc_dlerror_result");

		if (dle != NULL)
			off_dlerror = dle - (char *)ult__tp();
	}
	if (pthread_create(&t, NULL, probe_thread, NULL) != 0)
		return ("no thread to probe glibc with");
	pthread_join(t, NULL);
	if (pr.why != NULL)
		return (pr.why);
	if (ult__glibc_tls.tcache == 0 && malloc_is_glibc())
		return ("malloc's per-thread cache was not found");
	return (NULL);
}

/* ---- blocks ---- */

/*
 * The blocks themselves come from slabs of our own mappings, not from
 * malloc (what _dl_allocate_tls(NULL) would use): thousands of them made
 * by a burst of spawns would fragment the heap, and the heap keeps what
 * it grew after they are freed (tens of MB resident after ult_shutdown
 * on a loaded host).  A slab is unmapped when its last block is freed
 * (at shutdown).  glibc's allocator, given the memory, still makes the
 * dtv and copies the images, as for a thread on a user stack.  A slot
 * starts with its slab's address; the block fills its top as glibc lays
 * one out at a stack's top: static TLS below the descriptor at tp
 * (variant II), or the descriptor below tp and static TLS above it
 * (variant I).
 */
#define SLAB_SLOTS 64

struct slab {
	size_t carved;		  /* (l) slots handed out */
	size_t live;		  /* (l) of those, not yet freed */
	struct slab *next, *prev; /* (l) on `slabs' */
	unsigned gen;		  /* slab_gen when mapped */
};

static struct mtx slab_lock = MTX_INITIALIZER("tls slabs");
static struct slab *slab_cur; /* (l) the slab being carved, or NULL */
static struct slab *slabs;    /* (l) every mapped slab */
static unsigned slab_gen;     /* (l) fork children counted */
static size_t slot_size, slot_align, slab_hdr;

static size_t
slab_bytes(void)
{
	return (slab_hdr + SLAB_SLOTS * slot_size);
}

/* The probe's: 0, or why blocks cannot come from slabs. */
static const char *
slab_geometry(size_t size, size_t align)
{
	if (align < 64)
		align = 64;
	if (align > 4096 || (align & (align - 1)) != 0)
		return ("static TLS aligned beyond a page");
	/* The block (size: static TLS with the TCB; in variant I the
	 * descriptor below it too) aligned as glibc aligns it (down by less
	 * than align), and at least align bytes below it for the slab word;
	 * every slot aligned so. */
	slot_align = align;
	slot_size = (size + (size_t)M_PRE + 3 * align - 1) & ~(align - 1);
	slab_hdr = (sizeof(struct slab) + align - 1) & ~(align - 1);
	return (NULL);
}

/* How far the block's top lies above its thread pointer. */
static size_t
tp_to_top(void)
{
#if ULT_TLS_VARIANT == 2
	return (sizeof(struct m_pthread));
#else
	return (static_size);
#endif
}

/* The thread pointer of the block in a slot. */
static char *
slot_tp(char *slot)
{
	return ((char *)(((uintptr_t)slot + slot_size - tp_to_top()) &
	    ~(uintptr_t)(slot_align - 1)));
}

/* A zeroed slot's thread pointer, or NULL. */
static char *
slot_get(void)
{
	struct slab *sl;
	char *slot;

	mtx_lock_spin(&slab_lock);
	if ((sl = slab_cur) == NULL) {
		void *m = mmap(NULL, slab_bytes(), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			mtx_unlock_spin(&slab_lock);
			return (NULL);
		}
		sl = slab_cur = m;
		sl->carved = sl->live = 0;
		sl->gen = slab_gen;
		sl->prev = NULL;
		if ((sl->next = slabs) != NULL)
			slabs->prev = sl;
		slabs = sl;
	}
	slot = (char *)sl + slab_hdr + sl->carved * slot_size;
	sl->carved++;
	sl->live++;
	if (sl->carved == SLAB_SLOTS)
		slab_cur = NULL;
	mtx_unlock_spin(&slab_lock);
	*(struct slab **)(void *)slot = sl;
	return (slot_tp(slot));
}

/* A block's slot is back: its slab goes when it was the last. */
static void
slot_put(char *tp)
{
	/* tp is the slot's end less tp_to_top, rounded down to the
	 * alignment the slots have. */
	uintptr_t slot =
	    ((uintptr_t)tp + tp_to_top() - slot_size + slot_align - 1) &
	    ~(uintptr_t)(slot_align - 1);
	struct slab *sl = *(struct slab **)slot;
	int unmap;

	mtx_lock_spin(&slab_lock);
	if (sl->gen != slab_gen) {
		/* A parent's slab, forgotten by the fork child. */
		mtx_unlock_spin(&slab_lock);
		return;
	}
	unmap = --sl->live == 0;
	if (unmap) {
		if (sl == slab_cur)
			slab_cur = NULL;
		if (sl->next != NULL)
			sl->next->prev = sl->prev;
		if (sl->prev != NULL)
			sl->prev->next = sl->next;
		else
			slabs = sl->next;
	}
	mtx_unlock_spin(&slab_lock);
	if (unmap)
		munmap(sl, slab_bytes());
}

/*
 * In a fork child: another thread of the parent may have held the lock
 * mid-update, so the parent's slabs are forgotten (leaked, blocks still
 * in use among them: the forking thread's own) and new ones start.
 */
void
ult__glibc_tls_fork_child(void)
{
	mtx_init(&slab_lock, "tls slabs");
	slab_cur = NULL;
	slabs = NULL;
	slab_gen++;
}

/* ---- static TLS of modules loaded later ---- */

/*
 * glibc gives a module dlopen'ed later static TLS when its code needs it
 * (initial-exec accesses, or TLS descriptors while the surplus lasts) and
 * copies its image into the blocks of the threads on its own lists only,
 * not into ours.  ult__glibc_tls_dlopened, after each dlopen, finds such
 * modules and copies their images into every block of every slab (live
 * or pooled); a pooled block's reset copies them again.  The images are
 * copied here, so a module closed meanwhile leaves nothing dangling.
 */
struct late_mod {
	long off; /* from tp */
	size_t filesz, memsz;
	const void *src; /* the module's own image, to tell it apart */
	unsigned char *image;
};

static struct late_mod *late; /* (slab_lock) */
static int nlate;	      /* (slab_lock) */
static atomic_int late_any;   /* there are some: resets look */

struct late_scan {
	char *tp;
	struct late_mod *v;
	int n, cap, failed;
};

static int
scan_late(struct dl_phdr_info *info, size_t sz, void *arg)
{
	struct late_scan *sc = arg;

	(void)sz;
	for (int i = 0; i < info->dlpi_phnum && !sc->failed; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct m_tls_index ti = {info->dlpi_tls_modid, 0};
		char *d = info->dlpi_tls_data;
		long off;
		int known = 0;

		if (ph->p_type != PT_TLS || info->dlpi_tls_modid == 0)
			continue;
		/* Not set up in this thread yet: glibc's answer for it, a
		 * place in static TLS (without allocating) or, for dynamic
		 * TLS, an allocation the thread frees at its end. */
		if (d == NULL && tls_get_addr != NULL)
			d = tls_get_addr(&ti);
		if (d == NULL)
			continue;
		off = d - sc->tp;
#if ULT_TLS_VARIANT == 2
		if (off >= 0 ||
		    off < -(long)(static_size - sizeof(struct m_pthread)))
			continue; /* dynamic TLS: the dtv's business */
#else
		if (off < ULT_TLS_TCB_SIZE || off >= (long)static_size)
			continue;
#endif
		for (int k = 0; k < nmods; k++)
			known |= mods[k].off == off;
		if (known)
			continue;
		if (sc->n == sc->cap) {
			int cap = sc->cap != 0 ? 2 * sc->cap : 8;
			struct late_mod *v = realloc(sc->v, cap * sizeof(*v));

			if (v == NULL) {
				sc->failed = 1;
				break;
			}
			sc->v = v;
			sc->cap = cap;
		}
		sc->v[sc->n].off = off;
		sc->v[sc->n].filesz = ph->p_filesz;
		sc->v[sc->n].memsz = ph->p_memsz;
		sc->v[sc->n].src = (const char *)info->dlpi_addr + ph->p_vaddr;
		if ((sc->v[sc->n].image = malloc(ph->p_filesz + 1)) == NULL) {
			sc->failed = 1;
			break;
		}
		memcpy(sc->v[sc->n].image, sc->v[sc->n].src, ph->p_filesz);
		sc->n++;
	}
	return (0);
}

static void
late_init(char *tp, const struct late_mod *m)
{
	memcpy(tp + m->off, m->image, m->filesz);
	memset(tp + m->off + m->filesz, 0, m->memsz - m->filesz);
}

static void
late_free(struct late_mod *v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i].image);
	free(v);
}

void
ult__glibc_tls_dlopened(void)
{
	struct late_scan sc = {.tp = ult__tp()};
	struct late_mod *old;
	int nold;

	if (static_size == 0)
		return; /* never probed: no blocks */
	dl_iterate_phdr(scan_late, &sc);
	if (sc.failed) {
		late_free(sc.v, sc.n);
		return;
	}
	mtx_lock_spin(&slab_lock);
	for (int i = 0; i < sc.n; i++) {
		int seen = 0;

		for (int k = 0; k < nlate && !seen; k++)
			seen = late[k].off == sc.v[i].off &&
			    late[k].src == sc.v[i].src &&
			    late[k].memsz == sc.v[i].memsz;
		if (seen)
			continue;
		for (struct slab *sl = slabs; sl != NULL; sl = sl->next)
			for (size_t j = 0; j < sl->carved; j++)
				late_init(slot_tp((char *)sl + slab_hdr +
					      j * slot_size),
				    &sc.v[i]);
	}
	old = late;
	nold = nlate;
	late = sc.v;
	nlate = sc.n;
	ULT_ST(&late_any, nlate != 0);
	mtx_unlock_spin(&slab_lock);
	late_free(old, nold);
}

void *
ult__glibc_tls_alloc(void)
{
	/* glibc's allocator, given the memory, takes the thread pointer:
	 * the descriptor (variant II) or the TCB above it (variant I). */
	char *tp = slot_get();
	struct m_pthread *pd;

	if (tp == NULL)
		return (NULL);
	if (g.allocate_tls(tp) == NULL) {
		slot_put(tp);
		return (NULL);
	}
	pd = PD(tp);
	/* The descriptor is zero but for the dtv; static TLS is the images. */
#if ULT_TLS_VARIANT == 2
	{
		void *dtv = pd->header.dtv;

		pd->header = tmpl.header;
		pd->header.tcb = pd->header.self = pd;
		pd->header.dtv = dtv;
	}
#else
	pd->header = tmpl.header;
#endif
	pd->header.gscope_flag = 0;
	/* fork's child unlinks THREAD_SELF from glibc's thread lists. */
	pd->list.next = pd->list.prev = &pd->list;
	pd->robust_prev = &pd->robust_head;
	pd->robust_head.list = &pd->robust_head;
	pd->robust_head.futex_offset = tmpl.robust_head.futex_offset;
	pd->flags = tmpl.flags;
	pd->schedparam = tmpl.schedparam;
	pd->schedpolicy = tmpl.schedpolicy;
	pd->specific[0] = pd->specific_1stblock;
	pd->user_stack = true;
	/* The kernel updates only the worker's registered area: this one
	 * says "not registered", so sched_getcpu asks the vDSO. */
	pd->rseq_area.cpu_id = RSEQ_CPU_ID_REGISTRATION_FAILED;
	*(void **)(tp + off_resp) = &pd->res;
	return (tp);
}

void
ult__glibc_tls_start(void *tp, void *stack, size_t size, void *(*fn)(void *),
    void *arg)
{
	struct m_pthread *pd = PD(tp);

	/* pthread_getattr_np(pthread_self()) reports the uthread's stack. */
	pd->stackblock = stack;
	pd->stackblock_size = size;
	pd->start_routine = fn;
	pd->arg = arg;
}

void
ult__glibc_tls_enter(void)
{
	g.ctype_init();
}

/* Like glibc's at thread exit: every key's destructor, in rounds, for
 * as long as destructors set values again. */
static void
key_destructors(void)
{
	for (int round = 0; round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
		int any = 0;

		for (unsigned k = 0; k < PTHREAD_KEYS_MAX; k++) {
			void (*destr)(void *) = g.keys[k].destr;
			void *v;

			if (!(g.keys[k].seq & 1) || destr == NULL ||
			    (v = pthread_getspecific(k)) == NULL)
				continue;
			pthread_setspecific(k, NULL);
			destr(v);
			any = 1;
		}
		if (!any)
			break;
	}
}

void
ult__glibc_tls_exit(void)
{
	char *tp = ult__tp();
	struct m_pthread *pd = PD(tp);

	g.call_tls_dtors();
	if (pd->specific_used)
		key_destructors();
	/* dlerror() reports a pending error once, and frees it when called
	 * again. */
	if (off_dlerror != 0 && *(void **)(tp + off_dlerror) != NULL) {
		dlerror();
		if (*(void **)(tp + off_dlerror) != NULL)
			dlerror();
	}
}

void
ult__glibc_tls_reset(void *tp)
{
	struct m_pthread *pd = PD(tp);
	union m_dtv *dtv = DTV(tp);

	/*
	 * Dynamic TLS of modules the uthread touched; the dtv stays.  There
	 * can be some only if a module had dynamic TLS when the probe ran, or
	 * if the dtv has seen a later generation: glibc brings a dtv up to
	 * date (dtv[0]) before it allocates for a module loaded after it.
	 */
	if (ndynamic != 0 || dtv[0].counter != base_gen)
		for (size_t i = 1; i <= dtv[-1].counter; i++)
			if (dtv[i].p.to_free != NULL) {
				free(dtv[i].p.to_free);
				dtv[i].p.to_free = NULL;
				dtv[i].p.val = DTV_UNALLOCATED;
			}
	if (ULT_LD(&late_any)) {
		mtx_lock_spin(&slab_lock);
		for (int i = 0; i < nlate; i++)
			late_init(tp, &late[i]);
		mtx_unlock_spin(&slab_lock);
	}
	if (span_image != NULL) {
		memcpy((char *)tp + span_lo, span_image, span_len);
	} else {
		for (int i = 0; i < nmods; i++) {
			char *d = (char *)tp + mods[i].off;

			if (mods[i].filesz != 0)
				memcpy(d, mods[i].image, mods[i].filesz);
			memset(d + mods[i].filesz, 0,
			    mods[i].memsz - mods[i].filesz);
		}
	}
	*(void **)((char *)tp + off_resp) = &pd->res;
	pd->robust_prev = &pd->robust_head;
	pd->robust_head.list = &pd->robust_head;
	pd->robust_head.list_op_pending = NULL;
	pd->cleanup = pd->cleanup_jmp_buf = NULL;
	pd->cancelhandling = 0;
	pd->joinid = pd->result = NULL;
	if (pd->specific_used) {
		for (int i = 1; i < 32; i++) {
			free(pd->specific[i]);
			pd->specific[i] = NULL;
		}
		memset(pd->specific_1stblock, 0, sizeof(pd->specific_1stblock));
		pd->specific_used = false;
	}
	if (pd->tls_state.strsignal_buf != NULL ||
	    pd->tls_state.strerror_l_buf != NULL) {
		free(pd->tls_state.strsignal_buf);
		free(pd->tls_state.strerror_l_buf);
		pd->tls_state.strsignal_buf = pd->tls_state.strerror_l_buf =
		    NULL;
	}
	if ((pd->res.options & RES_INIT) || pd->res.nscount != 0) {
		res_nclose(&pd->res);
		memset(&pd->res, 0, sizeof(pd->res));
	}
	if (pd->tpp != NULL) {
		free(pd->tpp);
		pd->tpp = NULL;
	}
	memset(&pd->exc, 0, sizeof(pd->exc));
	pd->rseq_area.rseq_cs = 0;
	pd->rseq_area.cpu_id = RSEQ_CPU_ID_REGISTRATION_FAILED;
}

void
ult__glibc_tls_free(void *tp)
{
	/* The dtv and dynamic TLS; the block is ours. */
	g.deallocate_tls(tp, false);
	slot_put(tp);
}

void
ult__glibc_rseq_forget(void *tp)
{
	/* glibc registers max(__rseq_size, 32) bytes; the kernel wants the
	 * same address, length and signature back. */
	unsigned len = __rseq_size > 32 ? __rseq_size : 32;
	int e = errno; /* the child's errno is the forking uthread's: keep it
			  where the call fails (qemu-user has no rseq) */

	if (off_rseq != 0)
		(void)syscall(SYS_rseq, (char *)tp + off_rseq, len,
		    1 /* RSEQ_FLAG_UNREGISTER */, RSEQ_SIG);
	errno = e;
}

void
ult__glibc_tls_malloc_words(void *tp, void **tcache, void **arena)
{
	*tcache = ult__glibc_tls.tcache != 0
	    ? *(void **)((char *)tp + ult__glibc_tls.tcache)
	    : NULL;
	*arena = ult__glibc_tls.arena != 0
	    ? *(void **)((char *)tp + ult__glibc_tls.arena)
	    : NULL;
}

/* ---- SIGSETXID ---- */

/* The kernel's struct sigaction (glibc's sigaction refuses signal 33). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static struct ksigaction setxid_old;
static void (*setxid_glibc)(int, siginfo_t *, void *);
static int setxid_wrapped;

/* Runs on whatever block was interrupted; glibc's handler must see the
 * worker's descriptor, the one glibc signalled and waits on. */
static void
setxid_handler(int sig, siginfo_t *si, void *uc)
{
	void *own = ult__tls_host_tp(), *tp = ult__tp_read();
	int move = own != NULL && own != tp;

	if (move)
		ult__tp_write(own);
	setxid_glibc(sig, si, uc);
	if (move)
		ult__tp_write(tp);
}

int
ult__glibc_setxid_wrap(void)
{
	struct ksigaction sa;

	if (setxid_wrapped)
		return (0);
	if (syscall(SYS_rt_sigaction, SIGSETXID, NULL, &setxid_old, 8) != 0)
		return (EINVAL);
	/* glibc installs it with the first pthread_create (the probe's). */
	if (!(setxid_old.flags & SA_SIGINFO) ||
	    (uintptr_t)setxid_old.handler <= (uintptr_t)SIG_IGN)
		return (EINVAL);
	setxid_glibc = (void (*)(int, siginfo_t *, void *))setxid_old.handler;
	sa = setxid_old;
	sa.handler = (void *)setxid_handler;
	if (syscall(SYS_rt_sigaction, SIGSETXID, &sa, NULL, 8) != 0)
		return (EINVAL);
	setxid_wrapped = 1;
	return (0);
}

void
ult__glibc_setxid_unwrap(void)
{
	if (!setxid_wrapped)
		return;
	syscall(SYS_rt_sigaction, SIGSETXID, &setxid_old, NULL, 8);
	setxid_wrapped = 0;
}

#else /* no known thread pointer or no rseq: no blocks; the probe says so */

struct ult__glibc_tls ult__glibc_tls;

const char *
ult__glibc_tls_probe(void)
{
	return ("no thread block support for this architecture or glibc");
}

void *
ult__glibc_tls_alloc(void)
{
	return (NULL);
}

void
ult__glibc_tls_start(void *tp, void *stack, size_t size, void *(*fn)(void *),
    void *arg)
{
	(void)tp;
	(void)stack;
	(void)size;
	(void)fn;
	(void)arg;
}

void
ult__glibc_tls_enter(void)
{}

void
ult__glibc_tls_exit(void)
{}

void
ult__glibc_tls_reset(void *tp)
{
	(void)tp;
}

void
ult__glibc_tls_free(void *tp)
{
	(void)tp;
}

void
ult__glibc_tls_dlopened(void)
{}

void
ult__glibc_rseq_forget(void *tp)
{
	(void)tp;
}

void
ult__glibc_tls_malloc_words(void *tp, void **tcache, void **arena)
{
	(void)tp;
	*tcache = *arena = NULL;
}

int
ult__glibc_setxid_wrap(void)
{
	return (EINVAL);
}

void
ult__glibc_setxid_unwrap(void)
{}
#endif
