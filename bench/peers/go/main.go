// SPDX-License-Identifier: BSD-2-Clause
// Go peer for the ult benchmark suite (runtime name "go").
//
// Measures the cases of the suite contract the same way the C programs do,
// with goroutines and the Go standard library: micro (yield, create_join,
// mutex_handoff, condvar_prodcons, chan_prodcons, skynet, skynet_10k,
// thread_ring), make (the mkdag DAG, -j4 and -j16) and latency
// (schbench-like wakeup latency, hogs=0 and hogs=NumCPU).
//
// Usage: go-peer [-quick] [-data DIR] [-exp micro|make|latency|all]
//
//	[-cases a,b,...] [-rounds K] [-div D]
//
// -cases runs only the named micro cases, -rounds sets the rounds per
// figure and -div divides micro's full sizes by D (skynet's excepted):
// bench/busy.sh runs a few cases many times on a loaded host.
//
// stdout carries only "R<TAB>exp<TAB>case<TAB>go<TAB>metric<TAB>value"
// lines; explanations go to stderr.  Every case checks its result and the
// program exits 1 on a failed check.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const rtName = "go"

var (
	quick   bool
	dataDir string
	rounds  = 5
	sizeDiv = 1
	only    map[string]bool // -cases; nil: every case
)

// sel says whether micro case name is to run.
func sel(name string) bool {
	return only == nil || only[name]
}

func logf(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
}

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "go peer: FAILED: "+format+"\n", a...)
	os.Exit(1)
}

// result prints one contract line.  Whole numbers print without decimals.
func result(exp, cs, metric string, v float64) {
	var s string
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	} else {
		s = strconv.FormatFloat(v, 'f', 3, 64)
	}
	fmt.Printf("R\t%s\t%s\t%s\t%s\t%s\n", exp, cs, rtName, metric, s)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// best-of-rounds harness: run f rounds times, return the median.
func medianOf(f func() float64) float64 {
	v := make([]float64, rounds)
	for i := range v {
		v[i] = f()
	}
	return median(v)
}

// ---- calibrated busy work -------------------------------------------------

var (
	sink        uint64
	itersPerUs  float64
	calibrateMu sync.Once
)

// spin runs a dependent multiply-add chain the compiler cannot fold.
func spin(iters int64) {
	x := sink | 1
	for i := int64(0); i < iters; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	atomic.StoreUint64(&sink, x)
}

// calibrate measures loop iterations per microsecond; the fastest of
// several trials, since a shared machine can only make a trial slower.
func calibrate() {
	calibrateMu.Do(func() {
		const n = 2000000
		spin(n)
		best := 0.0
		for i := 0; i < 7; i++ {
			t0 := time.Now()
			spin(n)
			us := float64(time.Since(t0).Nanoseconds()) / 1e3
			if r := n / us; r > best {
				best = r
			}
		}
		itersPerUs = best
		logf("busy loop: %.1f iterations/us (fastest of 7 trials)", best)
	})
}

func busyUs(us float64) {
	spin(int64(us * itersPerUs))
}

// ---- micro ----------------------------------------------------------------

func yieldRound(n int) float64 {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	var wg sync.WaitGroup
	wg.Add(2)
	t0 := time.Now()
	for k := 0; k < 2; k++ {
		go func() {
			for i := 0; i < n; i++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
	return float64(time.Since(t0).Nanoseconds()) / float64(2*n)
}

func createJoinRound(n int) float64 {
	done := make(chan struct{})
	t0 := time.Now()
	for i := 0; i < n; i++ {
		go func() { done <- struct{}{} }()
		<-done
	}
	return float64(time.Since(t0).Nanoseconds()) / float64(n)
}

func mutexHandoffRound(n int) float64 {
	var mu sync.Mutex
	c := sync.NewCond(&mu)
	turn := 0
	var wg sync.WaitGroup
	wg.Add(2)
	t0 := time.Now()
	for me := 0; me < 2; me++ {
		go func(me int) {
			for i := 0; i < n/2; i++ {
				mu.Lock()
				for turn != me {
					c.Wait()
				}
				turn = 1 - me
				c.Signal()
				mu.Unlock()
			}
			wg.Done()
		}(me)
	}
	wg.Wait()
	el := time.Since(t0)
	if turn != 0 {
		fail("mutex_handoff: turn %d after %d handoffs", turn, n)
	}
	return float64(el.Nanoseconds()) / float64(n/2*2)
}

const qslots = 64

func condvarProdconsRound(n int) float64 {
	var mu sync.Mutex
	notFull := sync.NewCond(&mu)
	notEmpty := sync.NewCond(&mu)
	var buf [qslots]int64
	head, tail, count := 0, 0, 0
	var sum int64
	var wg sync.WaitGroup
	wg.Add(2)
	t0 := time.Now()
	go func() {
		for i := 0; i < n; i++ {
			mu.Lock()
			for count == qslots {
				notFull.Wait()
			}
			buf[tail] = int64(i)
			tail = (tail + 1) % qslots
			count++
			notEmpty.Signal()
			mu.Unlock()
		}
		wg.Done()
	}()
	go func() {
		var s int64
		for i := 0; i < n; i++ {
			mu.Lock()
			for count == 0 {
				notEmpty.Wait()
			}
			v := buf[head]
			head = (head + 1) % qslots
			count--
			notFull.Signal()
			mu.Unlock()
			s += v
		}
		sum = s
		wg.Done()
	}()
	wg.Wait()
	el := time.Since(t0)
	if want := int64(n) * int64(n-1) / 2; sum != want {
		fail("condvar_prodcons: sum %d, want %d", sum, want)
	}
	return float64(el.Nanoseconds()) / float64(n)
}

func chanProdconsRound(n int) float64 {
	ch := make(chan int64, qslots)
	res := make(chan int64)
	t0 := time.Now()
	go func() {
		for i := 0; i < n; i++ {
			ch <- int64(i)
		}
		close(ch)
	}()
	go func() {
		var s int64
		for v := range ch {
			s += v
		}
		res <- s
	}()
	sum := <-res
	el := time.Since(t0)
	if want := int64(n) * int64(n-1) / 2; sum != want {
		fail("chan_prodcons: sum %d, want %d", sum, want)
	}
	return float64(el.Nanoseconds()) / float64(n)
}

// skynet is the canonical Go version (atemerev/skynet): unbuffered
// channel per parent, a goroutine per node.
func skynet(c chan<- int64, num, size, div int64) {
	if size == 1 {
		c <- num
		return
	}
	rc := make(chan int64)
	for i := int64(0); i < div; i++ {
		go skynet(rc, num+i*(size/div), size/div, div)
	}
	var sum int64
	for i := int64(0); i < div; i++ {
		sum += <-rc
	}
	c <- sum
}

// skynetChild runs in a fresh process (see skynetRound) and prints
// "<ms> <sum>".
func skynetChild(leaves int64) {
	c := make(chan int64)
	t0 := time.Now()
	go skynet(c, 0, leaves, 10)
	sum := <-c
	fmt.Printf("%.3f %d\n", float64(time.Since(t0).Nanoseconds())/1e6, sum)
}

// skynetRound re-executes this binary so that ru_maxrss is that of a fresh
// process doing only skynet (Go runtime, heap, goroutine stacks).
func skynetRound(leaves int64) (ms float64, rssKiB int64) {
	self, err := os.Executable()
	if err != nil {
		fail("skynet: os.Executable: %v", err)
	}
	cmd := exec.Command(self, "-skynet-child", strconv.FormatInt(leaves, 10))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		fail("skynet child: %v", err)
	}
	var sum int64
	if _, err := fmt.Sscanf(string(out), "%f %d", &ms, &sum); err != nil {
		fail("skynet child output %q: %v", out, err)
	}
	if want := leaves * (leaves - 1) / 2; sum != want {
		fail("skynet %d: sum %d, want %d", leaves, sum, want)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ms, ru.Maxrss
}

func benchSkynet(cs string, leaves int64) {
	ms := make([]float64, rounds)
	var maxrss int64
	for i := range ms {
		var rss int64
		ms[i], rss = skynetRound(leaves)
		if rss > maxrss {
			maxrss = rss
		}
	}
	result("micro", cs, "ms", median(ms))
	result("micro", cs, "peak_rss_MiB", float64(maxrss)/1024)
}

const ringSize = 503

func threadRingRound(n int) (float64, int) {
	chans := make([]chan int, ringSize)
	for i := range chans {
		chans[i] = make(chan int)
	}
	res := make(chan int, 1)
	var wg sync.WaitGroup
	wg.Add(ringSize)
	for i := 0; i < ringSize; i++ {
		go func(id int, in <-chan int, out chan<- int) {
			for t := range in {
				if t == 0 {
					res <- id
					continue
				}
				out <- t - 1
			}
			wg.Done()
		}(i+1, chans[i], chans[(i+1)%ringSize])
	}
	t0 := time.Now()
	chans[0] <- n
	r := <-res
	el := time.Since(t0)
	for _, c := range chans {
		close(c)
	}
	wg.Wait()
	return float64(el.Nanoseconds()) / float64(n), r
}

func runMicro() {
	nYield, nCreate, nHand, nPC, nRing := 1000000, 100000, 100000, 1000000, 1000000
	skyLeaves := int64(1000000)
	if quick {
		nYield, nCreate, nHand, nPC, nRing = 100000, 10000, 10000, 100000, 1000
		skyLeaves = 100000
	} else if sizeDiv > 1 {
		div := func(n int) int {
			if n/sizeDiv < 1 {
				return 1
			}
			return n / sizeDiv
		}
		nYield, nCreate, nHand, nPC, nRing = div(nYield), div(nCreate), div(nHand), div(nPC), div(nRing)
	}
	logf("go micro: %s, GOMAXPROCS %d, NumCPU %d, median of %d rounds",
		runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU(), rounds)

	if sel("yield") {
		logf("yield: 2 goroutines, GOMAXPROCS=1, runtime.Gosched x %d each", nYield)
		result("micro", "yield", "ns/op", medianOf(func() float64 { return yieldRound(nYield) }))
	}
	if sel("create_join") {
		logf("create_join: go f(); <-done, x %d (after 1000 warm-up)", nCreate)
		createJoinRound(1000)
		result("micro", "create_join", "ns/op", medianOf(func() float64 { return createJoinRound(nCreate) }))
	}
	if sel("mutex_handoff") {
		logf("mutex_handoff: sync.Mutex + sync.Cond, turn variable, %d handoffs", nHand)
		result("micro", "mutex_handoff", "ns/op", medianOf(func() float64 { return mutexHandoffRound(nHand) }))
	}
	if sel("condvar_prodcons") {
		logf("condvar_prodcons: 64-slot queue, sync.Mutex + 2 sync.Cond, %d items", nPC)
		result("micro", "condvar_prodcons", "ns/item", medianOf(func() float64 { return condvarProdconsRound(nPC) }))
	}
	if sel("chan_prodcons") {
		logf("chan_prodcons (extra): make(chan int64, 64), %d items", nPC)
		result("micro", "chan_prodcons", "ns/item", medianOf(func() float64 { return chanProdconsRound(nPC) }))
	}
	if sel("skynet") {
		logf("skynet: %d leaves, goroutine + unbuffered channel per node; each round in a fresh "+
			"child process of this binary: ms = child's own timer, peak_rss_MiB = max over rounds of "+
			"the child's ru_maxrss (Go runtime + heap + goroutine stacks)", skyLeaves)
		benchSkynet("skynet", skyLeaves)
	}
	if sel("skynet_10k") {
		logf("skynet_10k: 10000 leaves, same method")
		benchSkynet("skynet_10k", 10000)
	}
	if !sel("thread_ring") {
		return
	}
	logf("thread_ring: %d goroutines, unbuffered channels, %d passes", ringSize, nRing)
	want := nRing%ringSize + 1
	got := 0
	ns := medianOf(func() float64 {
		v, r := threadRingRound(nRing)
		if r != want {
			fail("thread_ring: result %d, want %d", r, want)
		}
		got = r
		return v
	})
	result("micro", "thread_ring", "ns/op", ns)
	result("micro", "thread_ring", "result", float64(got))
}

// ---- make (mkdag) ---------------------------------------------------------

type splitmix64 struct{ s uint64 }

func (r *splitmix64) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *splitmix64) unit() float64 {
	return float64(r.next()>>11) * (1.0 / 9007199254740992.0)
}

type mtask struct {
	busy  float64 // microseconds of calibrated busy work
	sleep bool    // then a 50 us sleep (the "I/O")
	ndeps int     // unfinished prerequisites
	users []int   // tasks waiting for this one
}

type dag struct {
	depend, all []mtask
	critUs      float64
	workUs      float64
}

func buildDag(D, F int) *dag {
	rng := splitmix64{42}
	g := &dag{}
	nf := D * F
	g.depend = make([]mtask, nf)
	comp := make([]float64, nf)
	for i := 0; i < nf; i++ {
		g.depend[i].busy = 50 + 150*rng.unit()
		u1 := rng.unit()
		u2 := rng.unit()
		if u1 <= 0 {
			u1 = 1.0 / 9007199254740992.0
		}
		z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
		comp[i] = math.Min(2000*math.Exp(z), 200000)
	}
	// Stage all in make order: dir d's compiles, then its archive; the
	// link last.
	g.all = make([]mtask, 0, nf+D+1)
	archives := make([]int, D)
	maxDep := 0.0
	maxDir := 0.0
	for _, t := range g.depend {
		maxDep = math.Max(maxDep, t.busy)
		g.workUs += t.busy
	}
	for d := 0; d < D; d++ {
		arch := len(g.all) + F
		maxC := 0.0
		for f := 0; f < F; f++ {
			c := comp[d*F+f]
			g.all = append(g.all, mtask{busy: c, sleep: true, users: []int{arch}})
			maxC = math.Max(maxC, c+50)
			g.workUs += c + 50
		}
		g.all = append(g.all, mtask{busy: 1000, ndeps: F})
		archives[d] = arch
		maxDir = math.Max(maxDir, maxC+1000)
		g.workUs += 1000
	}
	link := len(g.all)
	g.all = append(g.all, mtask{busy: 5000, ndeps: D})
	for _, a := range archives {
		g.all[a].users = []int{link}
	}
	g.workUs += 5000
	g.critUs = maxDep + maxDir + 5000
	return g
}

// execute runs the tasks make-like: a job token is taken, then the first
// task in make order whose prerequisites are done is started on a fresh
// goroutine, which returns its token when it ends.  Returns tasks run.
func execute(tasks []mtask, j int) int {
	n := len(tasks)
	ndeps := make([]int, n)
	for i := range tasks {
		ndeps[i] = tasks[i].ndeps
	}
	started := make([]bool, n)
	sem := make(chan struct{}, j)
	done := make(chan int, n)
	first := 0 // first task not yet started
	ran := 0
	complete := func(id int) {
		ran++
		for _, u := range tasks[id].users {
			ndeps[u]--
		}
	}
	pick := func() int {
		for first < n && started[first] {
			first++
		}
		for i := first; i < n; i++ {
			if !started[i] && ndeps[i] == 0 {
				return i
			}
		}
		return -1
	}
	for nstarted := 0; nstarted < n; nstarted++ {
		sem <- struct{}{} // take a job token
		for drained := false; !drained; {
			select {
			case id := <-done:
				complete(id)
			default:
				drained = true
			}
		}
		idx := pick()
		for idx < 0 {
			complete(<-done)
			idx = pick()
		}
		started[idx] = true
		go func(id int) {
			busyUs(tasks[id].busy)
			if tasks[id].sleep {
				time.Sleep(50 * time.Microsecond)
			}
			<-sem
			done <- id
		}(idx)
	}
	for ran < n {
		complete(<-done)
	}
	return ran
}

func tv(t syscall.Timeval) float64 {
	return float64(t.Sec) + float64(t.Usec)/1e6
}

func runMake() {
	D, F := 50, 40
	if quick {
		D, F = 8, 10
	}
	calibrate()
	g := buildDag(D, F)
	ntasks := len(g.depend) + len(g.all)
	logf("make: mkdag D=%d F=%d, %d tasks (depend %d, all %d); total busy+sleep work %.3f s, "+
		"serial critical path %.3f s; a goroutine per task, buffered channel of J as the job-token "+
		"semaphore, make-order pick of the first ready task; GOMAXPROCS %d",
		D, F, ntasks, len(g.depend), len(g.all), g.workUs/1e6, g.critUs/1e6, runtime.GOMAXPROCS(0))
	for _, j := range []int{4, 16} {
		var r0, r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
		t0 := time.Now()
		ran := execute(g.depend, j)
		ran += execute(g.all, j)
		real := time.Since(t0).Seconds()
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		if ran != ntasks {
			fail("make j%d: ran %d tasks, want %d", j, ran, ntasks)
		}
		cs := fmt.Sprintf("j%d", j)
		result("make", cs, "real_s", real)
		result("make", cs, "user_s", tv(r1.Utime)-tv(r0.Utime))
		result("make", cs, "sys_s", tv(r1.Stime)-tv(r0.Stime))
		result("make", cs, "tasks/s", float64(ntasks)/real)
	}
}

// ---- latency (schbench-like) ----------------------------------------------

const latWorkers = 4

// latencyCase runs nrounds rounds, or fewer if limit passes first (with
// hogs on every P, Go fires the 1 ms sleep's timer only at a preemption,
// so a round can take 10-40 ms); the caller reports the rounds done.
func latencyCase(hogs, nrounds int, limit time.Duration) []float64 {
	var stop int32
	var hwg sync.WaitGroup
	hwg.Add(hogs)
	for h := 0; h < hogs; h++ {
		go func() {
			for atomic.LoadInt32(&stop) == 0 {
			}
			hwg.Done()
		}()
	}
	chans := make([]chan time.Time, latWorkers)
	lats := make([][]float64, latWorkers)
	done := make(chan struct{}, latWorkers)
	var wwg sync.WaitGroup
	wwg.Add(latWorkers)
	for i := range chans {
		chans[i] = make(chan time.Time, 1)
		lats[i] = make([]float64, 0, nrounds)
		go func(i int) {
			for t0 := range chans[i] {
				lats[i] = append(lats[i], float64(time.Since(t0).Nanoseconds())/1e3)
				busyUs(50)
				done <- struct{}{}
			}
			wwg.Done()
		}(i)
	}
	msgDone := make(chan struct{})
	go func() { // the message thread
		start := time.Now()
		for r := 0; r < nrounds && time.Since(start) < limit; r++ {
			time.Sleep(time.Millisecond)
			t0 := time.Now()
			for _, c := range chans {
				c <- t0
			}
			for range chans {
				<-done
			}
		}
		for _, c := range chans {
			close(c)
		}
		close(msgDone)
	}()
	<-msgDone
	wwg.Wait()
	atomic.StoreInt32(&stop, 1)
	hwg.Wait()
	var all []float64
	for _, l := range lats {
		all = append(all, l...)
	}
	sort.Float64s(all)
	return all
}

func pct(s []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

func runLatency() {
	nrounds, limit := 2000, 20*time.Second
	if quick {
		nrounds, limit = 100, 5*time.Second
	}
	calibrate()
	ncpu := runtime.NumCPU()
	logf("latency: 1 message goroutine (time.Sleep 1 ms), %d workers on their own channels, "+
		"50 us busy each, %d rounds or %.0f s per case; hogs = spinning goroutines; GOMAXPROCS %d; "+
		"nearest-rank percentiles", latWorkers, nrounds, limit.Seconds(), runtime.GOMAXPROCS(0))
	for _, hogs := range []int{0, ncpu} {
		cs := fmt.Sprintf("hogs=%d", hogs)
		t0 := time.Now()
		s := latencyCase(hogs, nrounds, limit)
		done := len(s) / latWorkers
		if len(s)%latWorkers != 0 || done < 1 {
			fail("latency %s: %d samples, not a positive multiple of %d", cs, len(s), latWorkers)
		}
		logf("latency %s: %d of %d rounds in %.1f s (time cap %.0f s), %d samples",
			cs, done, nrounds, time.Since(t0).Seconds(), limit.Seconds(), len(s))
		result("latency", cs, "p50_us", pct(s, 0.50))
		result("latency", cs, "p99_us", pct(s, 0.99))
		result("latency", cs, "p999_us", pct(s, 0.999))
		result("latency", cs, "max_us", s[len(s)-1])
		if dataDir != "" {
			writeCDF(filepath.Join(dataDir, fmt.Sprintf("latency-%s-%s.dat", rtName, cs)), cs, s)
		}
	}
}

func writeCDF(path, cs string, s []float64) {
	f, err := os.Create(path)
	if err != nil {
		fail("%v", err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# wakeup latency CDF: %s %s, %d samples\n# latency_us fraction\n", rtName, cs, len(s))
	for i, v := range s {
		fmt.Fprintf(w, "%.3f %.6f\n", v, float64(i+1)/float64(len(s)))
	}
	if err := w.Flush(); err != nil {
		fail("%s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		fail("%s: %v", path, err)
	}
	logf("wrote %s", path)
}

func main() {
	exp := flag.String("exp", "all", "micro|make|latency|all")
	child := flag.Int64("skynet-child", 0, "internal: run one skynet of this many leaves")
	flag.BoolVar(&quick, "quick", false, "smoke sizes")
	flag.StringVar(&dataDir, "data", "", "directory for plot data files")
	cases := flag.String("cases", "", "micro: only these cases, comma-separated")
	nrounds := flag.Int("rounds", 0, "rounds per figure (default 5, -quick 3)")
	flag.IntVar(&sizeDiv, "div", 1, "micro: full sizes divided by this")
	flag.Parse()
	if *child > 0 {
		skynetChild(*child)
		return
	}
	if quick {
		rounds = 3
	}
	if *nrounds > 0 {
		rounds = *nrounds
	}
	if sizeDiv < 1 {
		fail("-div %d: must be at least 1", sizeDiv)
	}
	if *cases != "" {
		only = map[string]bool{}
		for _, c := range strings.Split(*cases, ",") {
			only[c] = true
		}
	}
	if dataDir != "" {
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			fail("%v", err)
		}
	}
	want := map[string]bool{}
	for _, e := range strings.Split(*exp, ",") {
		switch e {
		case "all":
			want["micro"], want["make"], want["latency"] = true, true, true
		case "micro", "make", "latency":
			want[e] = true
		default:
			fmt.Fprintf(os.Stderr, "usage: %s [-quick] [-data DIR] [-exp micro|make|latency|all] "+
				"[-cases a,b] [-rounds K] [-div D]\n", os.Args[0])
			os.Exit(2)
		}
	}
	if want["micro"] {
		runMicro()
	}
	if want["make"] {
		runMake()
	}
	if want["latency"] {
		runLatency()
	}
}
