-- SPDX-License-Identifier: GPL-2.0
-- fixed-job.lua - wrk as a fixed job: stop after FS_WRK_REQUESTS responses
-- (over all of wrk's connections; run with -t 1) and report the job's
-- run-time, which wrk itself cannot: its main thread sleeps for the whole
-- -d duration whatever its threads do.
--
-- Run-time: CLOCK_MONOTONIC from this thread's init (before its connections
-- open) to the last response of the job, in microseconds. At that response
-- the thread stops and wakes wrk's main thread (tgkill SIGINT, wrk's own
-- "stop" signal), which then calls done(). done() prints one JSON line on
-- stdout: requests (responses of the job: at most N; a response read in
-- the same event-loop pass as the N-th is after the job), runtime_us, the latency
-- percentiles of wrk's histogram (µs, per request: request written to
-- response read), errors by kind and non-2xx/3xx responses.
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } fs_timespec;
int clock_gettime(int clk, fs_timespec *ts);
int getpid(void);
int tgkill(int tgid, int tid, int sig);
]]
local CLOCK_MONOTONIC, SIGINT = 1, 2

local function now_us()
	local ts = ffi.new("fs_timespec")
	ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
	return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3
end

local limit = tonumber(os.getenv("FS_WRK_REQUESTS") or "")
if not limit or limit < 1 then
	io.stderr:write("fixed-job.lua: FS_WRK_REQUESTS '" .. tostring(os.getenv("FS_WRK_REQUESTS")) ..
		"': accepted: an integer >= 1\n")
	os.exit(2)
end

local threads = {}
function setup(thread)
	table.insert(threads, thread)
end

-- thread state: globals, read by done() through thread:get()
count, t_start, t_end = 0, 0, 0
function init(args)
	t_start = now_us()
end

function response(status, headers, body)
	count = count + 1
	if count == limit then
		t_end = now_us()
		wrk.thread:stop()
		local pid = ffi.C.getpid()
		ffi.C.tgkill(pid, pid, SIGINT)
	end
end

function done(summary, latency, requests)
	local t = threads[1]
	local e = summary.errors
	local t_end, t_start = t:get("t_end"), t:get("t_start")
	io.write(string.format('{"requests":%d,"limit":%d,"complete":%s,"runtime_us":%.0f,' ..
		'"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,' ..
		'"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
		math.min(t:get("count"), limit), limit, tostring(t_end > 0), t_end > 0 and t_end - t_start or -1,
		latency:percentile(50), latency:percentile(90), latency:percentile(99),
		latency.max, latency.mean, e.connect, e.read, e.write, e.status, e.timeout))
end
