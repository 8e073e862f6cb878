# SPDX-License-Identifier: BSD-2-Clause
# ult's gdb extension: the uthreads of a live process or a core file.
#
#   info uthreads      id, name, state, worker, priority, wait channel
#                      and, for a lock, the uthread that owns it
#   info ult-deadlock  cycles of uthreads waiting for locks each owns
#   uthread N bt       backtrace of uthread N (its id)
#   print m            an ult_mutex_t or ult_rwlock_t with its owner
#
# Installed under share/gdb/auto-load so that gdb loads it with libult.so;
# for a program linked with libult.a, load it by hand:
#   (gdb) source /usr/local/share/ult/ult-gdb.py
# It reads the runtime's own structures, so the library must have its
# debug information (ult builds with -g).
#
# A switched-out uthread's registers are on its stack, where its last
# switch (src/arch/x86_64/switch.S) pushed them: the mxcsr/x87 word, r15,
# r14, r13, r12, rbx, rbp, then the return address; or, in a build with
# the portable ucontext switch, in its ucontext_t.  A gdb unwinder
# claims the innermost frame of the selected thread for as long as the
# backtrace is printed and says that its caller is that saved context, so
# the frames printed after it are the uthread's; this works on a core
# file, whose registers cannot be changed.  A running uthread's registers
# are its worker's: the backtrace is that kernel thread's.

import struct

import gdb
import gdb.unwinder

UT_ZOMBIE, UT_FREE = 2, 3
TDS = {0: "inactive", 1: "sleeping", 2: "can-run", 3: "runnable", 4: "running"}


def _runtime():
    sym = gdb.lookup_static_symbol("slab_chunks")
    if sym is None:
        raise gdb.GdbError(
            "ult: no uthreads here (libult not loaded, or built without -g)")
    return sym.value()


def _uthreads():
    c = _runtime()
    while int(c) != 0:
        for i in range(int(c["nmade"])):
            ut = c["t"][i]
            if int(ut["lstate"]) not in (0, UT_FREE):
                yield ut
        c = c["next"]


def _string(p):
    try:
        return p.string() if int(p) != 0 else ""
    except gdb.error:
        return "?"


def _state(ut):
    if int(ut["lstate"]) == UT_ZOMBIE:
        return "zombie"
    return TDS.get(int(ut["td"]["td_state"]), "?")


def _worker(ut):
    td = ut["td"]
    cpu = int(td["td_oncpu"])
    return cpu if cpu >= 0 else int(td["td_lastcpu"])


# The lock words (src/api/mutex.c, rwlock.c): a mutex's word is its
# owner's id with flags in the low bits (1 contested, 4 deferred wakeups);
# bit 2 belongs to the id and marks a foreign thread.  A uthread's id is
# its struct ult_thread's address.
MTX_CONTESTED, SYNC_ID_FOREIGN, MTX_DEFERRED = 1, 2, 4
RW_WRITE, RW_ONE = 1, 8


def _owner_name(owner_id):
    """An owner id as words: uthread N "name", or a foreign thread."""
    if owner_id == 0:
        return "nobody"
    if owner_id & SYNC_ID_FOREIGN:
        return "a foreign thread (token 0x%x)" % (owner_id & ~7)
    try:
        ut = gdb.Value(owner_id).cast(
            gdb.lookup_type("struct ult_thread").pointer()).dereference()
        return "uthread %d \"%s\"" % (int(ut["id"]),
                                      ut["name"].string() or "-")
    except gdb.error:
        return "0x%x (unreadable)" % owner_id


def _blocked_owner(ut):
    """(lock, owner ult_thread or None, foreign owner id) for a uthread
    blocked on a lock's turnstile, else (None, None, 0)."""
    ts = ut["ts_blocked"]
    if int(ts) == 0:
        return None, None, 0
    obj = ts["ts_obj"]
    owner = ts["ts_owner"]
    if int(owner) != 0:
        return obj, owner.dereference(), 0
    # No uthread owner on the turnstile: a mutex's word may name a
    # foreign one.
    if _string(ut["wmesg"]) == "mutex":
        word = int(obj.cast(gdb.lookup_type("struct ult_mutex").pointer())
                   .dereference()["_word"])
        if word & SYNC_ID_FOREIGN:
            return obj, None, word & ~(MTX_CONTESTED | MTX_DEFERRED)
    return obj, None, 0


class InfoUthreads(gdb.Command):
    """List the uthreads: id, name, state, worker, priority, wait channel."""

    def __init__(self):
        super().__init__("info uthreads", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        print("%6s  %-24s %-9s %6s %4s  %s" %
              ("ID", "NAME", "STATE", "WORKER", "PRI", "WAIT CHANNEL"))
        n = 0
        for ut in _uthreads():
            state = _state(ut)
            wchan = ""
            if state == "sleeping":
                # A lock waiter's channel is the lock its turnstile is for.
                obj = ut["wchan"]
                if int(obj) == 0 and int(ut["ts_blocked"]) != 0:
                    obj = ut["ts_blocked"]["ts_obj"]
                wchan = "%s (%s)" % (_string(ut["wmesg"]) or "?",
                                     obj.cast(
                                         gdb.lookup_type("void").pointer()))
                lock, owner, foreign = _blocked_owner(ut)
                if owner is not None:
                    wchan += " owner %d \"%s\"" % (
                        int(owner["id"]), owner["name"].string() or "-")
                elif foreign:
                    wchan += " owner " + _owner_name(foreign)
            print("%6d  %-24s %-9s %6d %4d  %s" %
                  (int(ut["id"]), ut["name"].string() or "-", state,
                   _worker(ut), int(ut["td"]["td_priority"]), wchan))
            n += 1
        print("%d uthreads" % n)


class InfoUltDeadlock(gdb.Command):
    """Cycles of uthreads each waiting for a lock the next one owns."""

    def __init__(self):
        super().__init__("info ult-deadlock", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        waits = {}  # id -> (ut, lock, owner id)
        for ut in _uthreads():
            if _state(ut) != "sleeping":
                continue
            lock, owner, _ = _blocked_owner(ut)
            if owner is not None:
                waits[int(ut["id"])] = (ut, lock, int(owner["id"]))
        done, n = set(), 0
        for start in sorted(waits):
            path, i = [], start
            while i in waits and i not in done and i not in path:
                path.append(i)
                i = waits[i][2]
            done.update(path)
            if i not in path:
                continue
            cycle = path[path.index(i):]
            n += 1
            print("deadlock %d: %d uthreads wait for each other:" %
                  (n, len(cycle)))
            for j in cycle:
                ut, lock, owner = waits[j]
                print("  uthread %d \"%s\" waits for %s %s, owned by "
                      "uthread %d \"%s\"" %
                      (j, ut["name"].string() or "-",
                       _string(ut["wmesg"]) or "lock",
                       lock.cast(gdb.lookup_type("void").pointer()), owner,
                       waits[owner][0]["name"].string() or "-"))
        if n == 0:
            print("no deadlock among the uthreads blocked on locks")


class _MutexPrinter:
    """ult_mutex_t: unlocked, or its owner and flags."""

    def __init__(self, val):
        self.val = val

    def to_string(self):
        word = int(self.val["_word"])
        if word == 0:
            return "ult_mutex_t unlocked"
        flags = [f for b, f in ((MTX_CONTESTED, "contested"),
                                (MTX_DEFERRED, "deferred wakeups"))
                 if word & b]
        return "ult_mutex_t owned by %s%s" % (
            _owner_name(word & ~(MTX_CONTESTED | MTX_DEFERRED)),
            " (%s)" % ", ".join(flags) if flags else "")


class _RwlockPrinter:
    """ult_rwlock_t: unlocked, its writer, or how many readers."""

    def __init__(self, val):
        self.val = val

    def to_string(self):
        state = int(self.val["_state"])
        if state & RW_WRITE:
            return "ult_rwlock_t write-locked by %s" % _owner_name(
                int(self.val["_owner"]))
        if state >= RW_ONE:
            return "ult_rwlock_t read-locked by %d" % (state // RW_ONE)
        return "ult_rwlock_t unlocked"


def _lookup_printer(val):
    t = val.type.strip_typedefs()
    if t.code != gdb.TYPE_CODE_STRUCT:
        return None
    if t.tag == "ult_mutex":
        return _MutexPrinter(val)
    if t.tag == "ult_rwlock":
        return _RwlockPrinter(val)
    return None


gdb.pretty_printers.append(_lookup_printer)


class _SavedContext(gdb.unwinder.Unwinder):
    """While `regs' is set: frame 0's caller is that saved context."""

    def __init__(self):
        super().__init__("ult-uthread")
        self.regs = None

    def __call__(self, pending):
        if self.regs is None or pending.level() != 0:
            return None
        # Its id's stack address is made just below the saved context,
        # so that gdb, which checks that callers' frames are outer, takes
        # the uthread's stack for this frame's caller's.
        fid = _FrameId(self.regs["rsp"] - 128, pending.read_register("rip"))
        info = pending.create_unwind_info(fid)
        for name, value in self.regs.items():
            info.add_saved_register(name, value)
        return info


class _FrameId:
    def __init__(self, sp, pc):
        self.sp = sp
        self.pc = pc


_unwinder = _SavedContext()
gdb.unwinder.register_unwinder(None, _unwinder, replace=True)


# Where glibc's x86-64 ucontext_t keeps each register (REG_* in
# <sys/ucontext.h>), for a build with the portable ucontext switch.
_GREGS = {"r12": 4, "r13": 5, "r14": 6, "r15": 7, "rbp": 10, "rbx": 11,
          "rsp": 15, "rip": 16}


def _saved_regs(ut):
    u64 = gdb.lookup_type("unsigned long")
    ctx = ut["ctx"]
    if any(f.name == "uc" for f in ctx.type.fields()):
        g = ctx["uc"]["uc_mcontext"]["gregs"]
        return {n: g[i].cast(u64) for n, i in _GREGS.items()}
    sp = int(ctx["sp"])
    words = struct.unpack(
        "<8Q", bytes(gdb.selected_inferior().read_memory(sp, 64)))
    names = ["r15", "r14", "r13", "r12", "rbx", "rbp", "rip"]
    regs = {n: gdb.Value(words[i + 1]).cast(u64) for i, n in enumerate(names)}
    regs["rsp"] = gdb.Value(sp + 64).cast(u64)
    return regs


def _print_frames(first):
    f, level = first, 0
    while f is not None and level < 256:
        sal = f.find_sal()
        where = ""
        if sal.symtab is not None:
            where = " at %s:%d" % (sal.symtab.filename, sal.line)
        print("#%-3d 0x%016x in %s%s" %
              (level, f.pc(), f.name() or "??", where))
        try:
            f = f.older()
        except gdb.error:
            break
        level += 1


def _find(id_):
    for ut in _uthreads():
        if int(ut["id"]) == id_:
            return ut
    raise gdb.GdbError("ult: no uthread %d (see info uthreads)" % id_)


class Uthread(gdb.Command):
    """uthread N bt: the backtrace of uthread N (an id from info uthreads)."""

    def __init__(self):
        super().__init__("uthread", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        if len(argv) != 2 or argv[1] not in ("bt", "backtrace"):
            raise gdb.GdbError("usage: uthread N bt")
        try:
            ut = _find(int(argv[0], 0))
        except ValueError:
            raise gdb.GdbError("usage: uthread N bt")
        state = _state(ut)
        print("uthread %d (%s), %s on worker %d" %
              (int(ut["id"]), ut["name"].string() or "-", state, _worker(ut)))
        if int(ut["oncpu"]) != 0:
            self._running(ut)
            return
        if int(ut["stack"]) == 0:
            raise gdb.GdbError("ult: uthread has no stack (it has exited)")
        _unwinder.regs = _saved_regs(ut)
        gdb.invalidate_cached_frames()
        try:
            _print_frames(gdb.newest_frame().older())
        finally:
            _unwinder.regs = None
            gdb.invalidate_cached_frames()

    def _running(self, ut):
        tid = int(gdb.parse_and_eval("ult__rt.workers")[_worker(ut)]["tid"])
        for t in gdb.selected_inferior().threads():
            if t.ptid[1] == tid:
                old = gdb.selected_thread()
                t.switch()
                try:
                    print("(running: the backtrace of its worker, LWP %d)" %
                          tid)
                    _print_frames(gdb.newest_frame())
                finally:
                    old.switch()
                return
        raise gdb.GdbError("ult: its worker's kernel thread %d is not here" %
                           tid)


InfoUthreads()
InfoUltDeadlock()
Uthread()
