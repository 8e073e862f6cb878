# SPDX-License-Identifier: BSD-2-Clause
# The python3 test (python.sh): threads with locks, conditions, queues, a
# barrier and an event; subprocess spawns and pipes, from several threads
# at once; a multiprocessing Pool of 4 over fork and plain Processes.
# It prints only what does not depend on timing.
import threading, queue, subprocess, multiprocessing, sys, hashlib

def threads_part():
    q = queue.Queue()
    out = queue.Queue()
    lock = threading.Lock()
    cond = threading.Condition()
    total = [0]
    done = [0]
    def worker(wid):
        while True:
            item = q.get()
            if item is None:
                q.task_done()
                break
            h = hashlib.sha256(str(item).encode()).hexdigest()
            s = sum(i * i for i in range(item % 500))
            with lock:
                total[0] += s
            out.put((item, h[:8]))
            q.task_done()
        with cond:
            done[0] += 1
            cond.notify_all()
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in ts: t.start()
    for i in range(4000): q.put(i)
    for _ in ts: q.put(None)
    q.join()
    with cond:
        cond.wait_for(lambda: done[0] == len(ts), timeout=60)
    for t in ts: t.join()
    res = sorted(out.get() for _ in range(out.qsize()))
    print("threads:", len(res), total[0], hashlib.sha256(repr(res).encode()).hexdigest()[:16], done[0])
    # a barrier and an event
    b = threading.Barrier(4); ev = threading.Event(); seen = []
    def bw(i):
        b.wait(); ev.wait()
        with lock: seen.append(i)
    bs = [threading.Thread(target=bw, args=(i,)) for i in range(4)]
    for t in bs: t.start()
    ev.set()
    for t in bs: t.join()
    print("barrier:", sorted(seen))

def subprocess_part():
    p = subprocess.run(["sh", "-c", "seq 1 1000 | tr 0 x; echo err >&2; exit 3"], capture_output=True, text=True)
    print("subprocess:", p.returncode, len(p.stdout), p.stdout.splitlines()[-1], p.stderr.strip())
    p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    o, _ = p.communicate(b"hello\n" * 10000)
    print("pipe:", p.returncode, len(o))
    # several children at once from several threads
    res = {}
    def run(i):
        res[i] = subprocess.check_output(["echo", str(i * i)]).strip().decode()
    ts = [threading.Thread(target=run, args=(i,)) for i in range(6)]
    for t in ts: t.start()
    for t in ts: t.join()
    print("threaded spawns:", [res[i] for i in range(6)])

def sq(x):
    return sum(i * x for i in range(2000)) % 1000003

def mp_part():
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        r = pool.map(sq, range(400), chunksize=10)
        r2 = sorted(pool.imap_unordered(sq, range(100)))
    print("pool:", len(r), sum(r), sum(r2))
    q = ctx.Queue()
    ps = [ctx.Process(target=q.put, args=(i,)) for i in range(4)]
    for p in ps: p.start()
    got = sorted(q.get() for _ in ps)
    for p in ps: p.join()
    print("processes:", got, [p.exitcode for p in ps])

if __name__ == "__main__":
    threads_part()
    subprocess_part()
    mp_part()
