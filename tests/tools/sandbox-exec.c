// SPDX-License-Identifier: GPL-2.0
/*
 * sandbox-exec.c - runs a command under the seccomp part of a systemd
 * unit's sandbox, for tests/sandbox-exec.bats (there is no systemd as PID 1
 * on the test machines, so the unit itself cannot be started):
 *
 *   sandbox-exec --syscalls NAME,... --families AF_X,... -- CMD [ARG]...
 *
 * --syscalls: the allow list of SystemCallFilter= (the test expands the
 *   unit's groups with "systemd-analyze syscall-filter"); any other system
 *   call fails with EPERM (SystemCallErrorNumber=EPERM). Names this
 *   architecture does not have are skipped, as systemd skips them.
 * --families: RestrictAddressFamilies=; socket() with any other family
 *   fails with EAFNOSUPPORT, as under systemd.
 * Only the native architecture's system calls pass
 * (SystemCallArchitectures=native: libseccomp's default), and
 * no_new_privs is set first (NoNewPrivileges=yes: libseccomp's default).
 * Capabilities are setpriv's part (the test runs setpriv, then this).
 * Exit 2 on a usage error, 1 when the filter cannot be loaded; otherwise
 * it becomes CMD.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* the families a unit names, by their systemd (and C) names */
static const struct {
	const char *name;
	int af;
} families[] = {
	{"AF_UNIX", AF_UNIX},	  {"AF_INET", AF_INET},
	{"AF_INET6", AF_INET6},	  {"AF_NETLINK", AF_NETLINK},
	{"AF_PACKET", AF_PACKET},
};

/* socket() families up to this one are filtered one by one; above it,
 * with one comparison (AF_MAX of this libc and then some) */
#define FAMILY_LIMIT 64

static int usage(const char *msg, const char *arg)
{
	fprintf(stderr,
		"sandbox-exec: %s '%s': usage: sandbox-exec --syscalls "
		"NAME,... --families AF_X,... -- CMD [ARG]...\n",
		msg, arg);
	return 2;
}

static int family_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strcmp(families[i].name, name))
			return families[i].af;
	return -1;
}

int main(int argc, char **argv)
{
	char *syscalls = NULL, *fams = NULL, *tok, *save;
	bool allowed[FAMILY_LIMIT] = {false};
	scmp_filter_ctx allow_ctx, family_ctx;
	int i, af, nr, err;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--syscalls") && i + 1 < argc)
			syscalls = argv[++i];
		else if (!strcmp(argv[i], "--families") && i + 1 < argc)
			fams = argv[++i];
		else
			return usage("unknown or incomplete option", argv[i]);
	}
	if (!syscalls || !fams || i + 1 >= argc)
		return usage("needs --syscalls, --families and a command after",
			     "--");

	allow_ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	family_ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!allow_ctx || !family_ctx) {
		fprintf(stderr, "sandbox-exec: seccomp_init failed\n");
		return 1;
	}
	for (tok = strtok_r(syscalls, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		nr = seccomp_syscall_resolve_name(tok);
		if (nr == __NR_SCMP_ERROR)
			continue;
		err = seccomp_rule_add(allow_ctx, SCMP_ACT_ALLOW, nr, 0);
		/* a pseudo number of another architecture's call */
		if (err && err != -EDOM && err != -EOPNOTSUPP) {
			fprintf(stderr, "sandbox-exec: system call '%s': %s\n",
				tok, strerror(-err));
			return 1;
		}
	}
	for (tok = strtok_r(fams, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		af = family_of(tok);
		if (af < 0)
			return usage("unknown address family", tok);
		allowed[af] = true;
	}
	/* two filters: the kernel takes the stricter verdict of both */
	for (af = 0; af < FAMILY_LIMIT; af++)
		if (!allowed[af] &&
		    seccomp_rule_add(family_ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
				     SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, af))) {
			fprintf(stderr,
				"sandbox-exec: cannot filter socket family "
				"%d\n",
				af);
			return 1;
		}
	if (seccomp_rule_add(family_ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
			     SCMP_SYS(socket), 1,
			     SCMP_A0(SCMP_CMP_GE, FAMILY_LIMIT))) {
		fprintf(stderr,
			"sandbox-exec: cannot filter socket families from %d\n",
			FAMILY_LIMIT);
		return 1;
	}
	/* the family filter first: execve must pass the allow list */
	err = seccomp_load(family_ctx);
	if (!err)
		err = seccomp_load(allow_ctx);
	if (err) {
		fprintf(stderr, "sandbox-exec: cannot load the filter: %s\n",
			strerror(-err));
		return 1;
	}
	seccomp_release(family_ctx);
	seccomp_release(allow_ctx);
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "sandbox-exec: cannot run '%s': %s\n", argv[i + 1],
		strerror(errno));
	return 1;
}
