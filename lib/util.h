/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.h - small helpers shared by splitctl, tunnel-cfg and fct-tap:
 * exit codes, logging, strict number parsing, clocks, stop signals and
 * safe output files. No BPF and no netlink in here.
 *
 * Error convention (the xdp-tools one): library-like code returns 0 or a
 * negative errno and leaves the words to its caller, which knows what the
 * user asked for; only the command layer prints, once, through pr_err().
 */
#ifndef FS_UTIL_H
#define FS_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Process exit codes, the same for every program of the project. */
enum fs_exit {
	FS_EXIT_OK = 0,
	FS_EXIT_RUNTIME = 1,	/* the system said no */
	FS_EXIT_USAGE = 2,	/* the user asked for something invalid */
};

/* ---- logging ------------------------------------------------------------ */
enum fs_log_level { FS_LOG_ERR, FS_LOG_WARN, FS_LOG_INFO, FS_LOG_DEBUG };

/* Program name (message prefix) and the most verbose level printed
 * (FS_LOG_INFO by default; -v gives FS_LOG_DEBUG). */
void fs_log_init(const char *prog, enum fs_log_level max);
/* The program name of fs_log_init() ("flowsplit" before it). */
const char *fs_log_prog(void);
/* "prog: message\n" on stderr when level <= the configured level. */
void fs_log(enum fs_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Long-running programs (the agent): prefix every line with the time
 * (ISO 8601, UTC, milliseconds) unless stderr is the systemd journal
 * ($JOURNAL_STREAM names stderr's device and inode, as systemd sets it
 * for a unit's output), which stamps lines itself. */
void fs_log_timestamps(void);
/* -j: every log line on stderr is one JSON object, {"level": "error" |
 * "warning" | "info" | "debug", "program": PROG, "message": TEXT} (and
 * "time" when stamped); stdout keeps the command's document. */
void fs_log_json(bool on);
bool fs_log_json_on(void);
bool fs_log_is_journal(void);
#define pr_err(...)   fs_log(FS_LOG_ERR, __VA_ARGS__)
#define pr_warn(...)  fs_log(FS_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  fs_log(FS_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) fs_log(FS_LOG_DEBUG, __VA_ARGS__)

/* ---- parsing ------------------------------------------------------------ */
/*
 * Strict decimal parse: digits only (no sign, no spaces, no 0x, no
 * suffix), within [min, max]. 0, -EINVAL (not a number) or -ERANGE.
 */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Durations, decimal numbers, yes/no, addresses...: params.h. */

/* ---- formatting --------------------------------------------------------- */
/*
 * A double as the Prometheus text format reads it: the shortest decimal
 * that parses back to the same value (0.000535979, not %.17g's
 * 0.00053597900000000001), or NaN, +Inf, -Inf. Returns buf (len >= 32
 * holds any value).
 */
const char *fs_prom_double(double v, char *buf, size_t len);

/* ---- arrays ------------------------------------------------------------- */
/*
 * Room for one more element in arr (n used of *cap, each size bytes): arr
 * itself while n < *cap, else arr reallocated to twice *cap (first when
 * *cap is 0), *cap updated. NULL when out of memory (arr and *cap left).
 */
void *fs_grow(void *arr, size_t *cap, size_t n, size_t size, size_t first);

/* ---- packets ------------------------------------------------------------ */
/* The largest Ethernet frame at MTU 1500, header included, no FCS: what
 * one full packet on a tunnel costs a queue. */
#define FS_FRAME_BYTES 1514
/* The Internet checksum (RFC 1071) of len bytes, in network byte order:
 * stored as it is into a header whose checksum field was 0. */
uint16_t inet_csum(const void *data, size_t len);
/* The bytes a network device has sent (its sysfs statistics), 0 when they
 * cannot be read. */
uint64_t fs_dev_tx_bytes(const char *dev);

/* ---- clocks ------------------------------------------------------------- */
/* Nanoseconds per second and per millisecond: the one spelling of both. */
#define FS_NS_PER_S 1000000000ull
#define FS_NS_PER_MS 1000000ull
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mono_ns(void);
/* Sleep until CLOCK_MONOTONIC reaches deadline_ns (or a signal). */
void sleep_until_ns(uint64_t deadline_ns);

/* ---- signals ------------------------------------------------------------ */
/* Set by the handlers that fs_signals_install() sets up. */
extern volatile sig_atomic_t fs_stop;	/* SIGINT, SIGTERM */
extern volatile sig_atomic_t fs_reload;	/* SIGHUP, when asked for */
/* SIGINT/SIGTERM set fs_stop (no SA_RESTART, so a blocking call returns
 * EINTR); with reload, SIGHUP sets fs_reload instead of killing us.
 * SIGPIPE is ignored (a closed reader becomes EPIPE). */
void fs_signals_install(bool reload);

/* ---- files -------------------------------------------------------------- */
/*
 * An output file written whole or not at all: a temporary file created in
 * the target's directory with O_CREAT|O_EXCL|O_NOFOLLOW (mkstemp), so a
 * link planted there is never followed, then renamed over the target by
 * out_file_commit(). "-" means stdout (no temporary, nothing renamed).
 */
struct out_file {
	FILE *f;
	char path[4096];	/* target */
	char tmp[4096];		/* temporary, "" for stdout */
};
/* 0 or -errno. mode applies to the new file (e.g. 0644). */
int out_file_open(struct out_file *o, const char *path, unsigned int mode);
/* Flush, fsync, rename over the target. 0 or -errno (the temporary is
 * removed on failure). */
int out_file_commit(struct out_file *o);
/* Give up: close and remove the temporary. */
void out_file_abort(struct out_file *o);
/* Remove the temporaries of @path that writers killed before their commit
 * left behind (for the owner of @path, as it removes @path). */
void out_file_remove_stale(const char *path);

/*
 * Open an input file for reading: refuses directories, FIFOs, sockets and
 * devices (which would block or make no sense) with -EISDIR / -EINVAL;
 * "-" is stdin. Returns the stream or NULL with errno set.
 */
FILE *in_file_open(const char *path);

#endif /* FS_UTIL_H */
