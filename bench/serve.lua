-- SPDX-License-Identifier: BSD-2-Clause
-- wrk script of bench/serve.sh: at the end of a run, one line with the
-- exact figures (wrk's own summary rounds them and changes units).
-- Latencies are in microseconds.
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("serve: requests=%d duration_us=%d bytes=%d " ..
		"p50_us=%.1f p99_us=%.1f max_us=%.1f " ..
		"connect=%d read=%d write=%d status=%d timeout=%d\n",
		summary.requests, summary.duration, summary.bytes,
		latency:percentile(50), latency:percentile(99), latency.max,
		e.connect, e.read, e.write, e.status, e.timeout))
end
