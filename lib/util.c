// SPDX-License-Identifier: GPL-2.0
/* util.c - see util.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util.h"

/* ---- logging ------------------------------------------------------------ */
static const char *log_prog = "flowsplit";
static enum fs_log_level log_max = FS_LOG_INFO;

void fs_log_init(const char *prog, enum fs_log_level max)
{
	log_prog = prog;
	log_max = max;
}

const char *fs_log_prog(void)
{
	return log_prog;
}

static bool log_stamp, log_json;

void fs_log_json(bool on)
{
	log_json = on;
}

bool fs_log_json_on(void)
{
	return log_json;
}

/* s as a JSON string body into out (control characters, quotes and
 * backslashes escaped; other bytes as they are: the text is UTF-8 or
 * ASCII). */
static void json_escape(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 7 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			o += snprintf(out + o, len - o, "\\%c", c);
		else if (c < 0x20)
			o += snprintf(out + o, len - o, "\\u%04x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
}

bool fs_log_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void fs_log_timestamps(void)
{
	log_stamp = !fs_log_is_journal();
}

void fs_log(enum fs_log_level level, const char *fmt, ...)
{
	char buf[2048], stamp[40] = "";
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (log_stamp && !clock_gettime(CLOCK_REALTIME, &ts) && gmtime_r(&ts.tv_sec, &tm)) {
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(stamp + strlen(stamp), sizeof(stamp) - strlen(stamp), ".%03ldZ ",
			 ts.tv_nsec / 1000000);
	}
	if (log_json) {
		static const char *const names[] = { "error", "warning", "info", "debug" };
		char esc[sizeof(buf) * 2];

		json_escape(buf, esc, sizeof(esc));
		if (stamp[0])
			stamp[strlen(stamp) - 1] = '\0';	/* the blank */
		fprintf(stderr, "{\"level\":\"%s\",%s%s%s\"program\":\"%s\",\"message\":\"%s\"}\n",
			names[level], stamp[0] ? "\"time\":\"" : "", stamp, stamp[0] ? "\"," : "",
			log_prog, esc);
		return;
	}
	/* one write: lines from concurrent processes do not interleave */
	fprintf(stderr, "%s%s: %s\n", stamp, log_prog, buf);
}

/* ---- parsing ------------------------------------------------------------ */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	const char *p;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	for (p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* ---- formatting --------------------------------------------------------- */
void *fs_grow(void *arr, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t ncap = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap)
		return arr;
	p = realloc(arr, ncap * size);
	if (p)
		*cap = ncap;
	return p;
}

const char *fs_prom_double(double v, char *buf, size_t len)
{
	const char *e;
	int prec;

	if (isnan(v)) {
		snprintf(buf, len, "NaN");
	} else if (isinf(v)) {
		snprintf(buf, len, "%cInf", v > 0 ? '+' : '-');
	} else {
		/* 17 significant digits always round-trip (IEEE 754 double) */
		for (prec = 1; prec <= 17; prec++) {
			snprintf(buf, len, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		/* 30, not 3e+01: whole digits written out below 1e17 */
		e = strchr(buf, 'e');
		if (e && e[1] == '+' && atoi(e + 2) < 17)
			snprintf(buf, len, "%.*g", atoi(e + 2) + 1, v);
	}
	return buf;
}

/* ---- packets ------------------------------------------------------------ */
uint16_t inet_csum(const void *data, size_t len)
{
	const uint8_t *b = data;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons(~sum & 0xffff);
}

uint64_t fs_dev_tx_bytes(const char *dev)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_bytes", dev);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* ---- clocks ------------------------------------------------------------- */
uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * FS_NS_PER_S + (uint64_t)t.tv_nsec;
}

void sleep_until_ns(uint64_t deadline_ns)
{
	struct timespec t = {
		.tv_sec = (time_t)(deadline_ns / FS_NS_PER_S),
		.tv_nsec = (long)(deadline_ns % FS_NS_PER_S),
	};

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
}

/* ---- signals ------------------------------------------------------------ */
volatile sig_atomic_t fs_stop;
volatile sig_atomic_t fs_reload;

static void on_stop(int sig)
{
	(void)sig;
	fs_stop = 1;
}

static void on_reload(int sig)
{
	(void)sig;
	fs_reload = 1;
}

void fs_signals_install(bool reload)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (reload) {
		sa.sa_handler = on_reload;
		sigaction(SIGHUP, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
}

/* ---- files -------------------------------------------------------------- */
/* The temporary of @path, beside it (so that rename() is atomic):
 * DIR/.NAME.@tail; 0 or -ENAMETOOLONG. */
static int tmp_name(char *buf, size_t len, const char *path, const char *tail)
{
	const char *slash = strrchr(path, '/');
	int n = snprintf(buf, len, "%.*s.%s.%s", slash ? (int)(slash - path + 1) : 0, path,
			 slash ? slash + 1 : path, tail);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int out_file_open(struct out_file *o, const char *path, unsigned int mode)
{
	int fd;

	memset(o, 0, sizeof(*o));
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (strlen(path) >= sizeof(o->path))
		return -ENAMETOOLONG;
	strcpy(o->path, path);
	if (tmp_name(o->tmp, sizeof(o->tmp), path, "XXXXXX"))
		return -ENAMETOOLONG;
	/* mkstemp: O_CREAT|O_EXCL with a random name; a planted link or file
	 * makes it pick another name, never follow it */
	fd = mkostemp(o->tmp, O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		o->tmp[0] = 0;
		return -errno;
	}
	if (fchmod(fd, mode) || !(o->f = fdopen(fd, "w"))) {
		int err = -errno;

		close(fd);
		unlink(o->tmp);
		o->tmp[0] = 0;
		return err;
	}
	return 0;
}

int out_file_commit(struct out_file *o)
{
	int err = 0;

	if (!o->f)
		return -EBADF;
	if (!o->tmp[0]) {
		err = fflush(o->f) == EOF ? -errno : 0;
		o->f = NULL;
		return err;
	}
	if (fflush(o->f) == EOF || fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) == EOF && !err)
		err = -errno;
	o->f = NULL;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp);
	o->tmp[0] = 0;
	return err;
}

void out_file_abort(struct out_file *o)
{
	if (o->f && o->tmp[0]) {
		fclose(o->f);
		unlink(o->tmp);
	}
	o->f = NULL;
	o->tmp[0] = 0;
}

void out_file_remove_stale(const char *path)
{
	char pat[sizeof(((struct out_file *)0)->tmp)];
	glob_t g;
	size_t i;

	if (tmp_name(pat, sizeof(pat), path, "??????") ||
	    glob(pat, GLOB_NOSORT | GLOB_NOESCAPE, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++)
		unlink(g.gl_pathv[i]);
	globfree(&g);
}

FILE *in_file_open(const char *path)
{
	struct stat sb;
	FILE *f;
	int fd;

	if (!strcmp(path, "-"))
		return stdin;
	/* O_NONBLOCK: opening a FIFO must not block before we can refuse it */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb)) {
		close(fd);
		return NULL;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}
