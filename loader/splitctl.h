/* SPDX-License-Identifier: GPL-2.0 */
/*
 * splitctl.h - internal interface between the parts of splitctl.
 *
 * main.c holds the command table; each command declares its options in a
 * typed table (lib/params.h) that parses and validates them into the
 * command's argument struct before the command runs. A cmd_*() function
 * gets the global options and its parsed arguments and returns a process
 * exit code (FS_EXIT_* of lib/util.h). Output goes through lib/json_print.h
 * (main.c opens and closes the document); errors are printed once, by the
 * command layer, with pr_err() as one line naming the bad value and what is
 * accepted. The state functions (state.c) return 0 or -errno and print
 * nothing.
 */
#ifndef SPLITCTL_H
#define SPLITCTL_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "flowsplit.h"
#include "json_print.h"
#include "params.h"
#include "util.h"

/* Global options, given before the command. */
struct sc_opts {
	__u32 given;
	const char *pin_dir;	/* --pin-dir, else $FLOWSPLIT_PIN_DIR, else default */
	bool json;		/* -j/--json */
	unsigned int verbose;	/* -v/--verbose, repeatable */
	bool version;		/* -V/--version */
};

/* -v count: libbpf's and libxdp's own logs follow it */
extern unsigned int sc_verbose_level;

/* ---- pinned state (state.c, and below the files it relies on) ------------ */
/* The pinned state of one flowsplit instance (one pin directory). */
struct sc_state {
	char dir[PATH_MAX];
	int lock_fd;		/* flock()ed directory fd while changing state */
	int flows4_fd;
	int flows6_fd;
	int config_fd;
	int stats_fd;
	int spill_fd;		/* fs_spill (the agent's grants); -1 when an
				 * instance pinned before it has none */
	int clock_prog_fd;	/* FS_PROG_CLOCK, to read bpf_jiffies64() */
};

/* Pin names inside the directory (maps use their FS_MAP_* names). */
#define SC_PIN_PROG		"prog_splitter"
#define SC_PIN_PROG_TC		"prog_splitter_tc"
#define SC_PIN_CLOCK		"prog_clock"
#define SC_PIN_OBSERVER		"prog_observer"
#define SC_PIN_LINK_FMT		"link_if%d"	/* one per attached ifindex */
/* The observer's TCX egress link on the same interface (message
 * boundaries, bpf/tcpseq.h): made, upgraded and removed with link_if. */
#define SC_PIN_OBSERVER_FMT	"observer_if%d"
/* Empty subdirectory per attached ifindex, made with its link and removed
 * with it: a link pin gone without a detach is noticed (status). */
#define SC_PIN_ATTACHED_FMT	"attached_if%d"
#define SC_PIN_TMP_SUFFIX	"_new"	/* program pin before its rename() */
#define SC_PIN_MODE		0600
/* detach waits at most this long for the kernel to release a link */
#define SC_DETACH_WAIT_MS	2000
/* Empty subdirectory: "splitctl created this pin directory" (bpffs holds
 * only pins and directories, and refuses names with a '.'). */
#define SC_PIN_CREATED		"created_by_splitctl"
/* Empty subdirectory recording the network namespace the instance was
 * attached in: its inode and cookie (ifindexes mean nothing elsewhere). */
#define SC_PIN_NETNS_FMT	"netns_%lu_%llu"

/*
 * Errors of the state functions below (negative errno values), worded by
 * sc_state_strerror() for the one message the caller prints:
 *   -EPERM          no root / CAP_BPF+CAP_NET_ADMIN
 *   -ENAMETOOLONG   pin directory path too long
 *   -EMEDIUMTYPE    the pin directory is not on a bpffs
 *   -ENOENT         its parent does not exist
 *   -ENODEV         its parent is not on a bpffs
 *   -ESRCH          the pin directory does not exist (nothing attached)
 *   -ESTALE         it was removed while we waited for its lock
 *   -EACCES         it is not owned by root (or us), or others may write it
 *   -ENODATA        no flowsplit maps pinned in it
 *   -EAGAIN         it kept disappearing while attach created it
 *   -EXDEV          it was attached in another network namespace
 *   -ENOMEDIUM      no bpffs, and this is a private mount namespace
 *   -ENOTEMPTY      no bpffs, and where one would go is not empty
 */
const char *sc_state_strerror(int err, const char *dir, char *buf, size_t len);

/* Resolve the pin directory (option > environment > default). */
const char *sc_pin_dir(const struct sc_opts *o);
/* Root / CAP_BPF+CAP_NET_ADMIN check: 0 or -EPERM. */
int sc_check_privileges(void);

/* ---- the pin directory's bpffs (bpffs.c) -------------------------------- */
/* The pin directory (or, when missing, its parent) is on a bpffs: 0 or
 * -errno. */
int sc_prepare_dir(const char *dir);
/* The directory that holds dir ("." for a relative name). */
void sc_parent_dir(const char *dir, char *parent, size_t len);
/* Where a bpffs would go for dir: dir itself when it exists, else its
 * parent. */
void sc_bpffs_target(const char *dir, char *target, size_t len);
/*
 * No bpffs for dir (sc_prepare_dir() said -ENODEV or -EMEDIUMTYPE): mount
 * one, as bpftool does, on dir when it exists, else on its parent, into
 * mounted. Only on an empty directory, and never in a private mount
 * namespace, as "ip netns exec" makes (unlike PID 1's or our parent's, or
 * with /sys mounted by ip netns): it dies with the command, and the pins
 * with it. 0, -ENOMEDIUM, -ENOTEMPTY or -errno.
 */
int sc_mount_bpffs(const char *dir, char *mounted, size_t len);
/* Would sc_mount_bpffs() mount one? 0, -ENOMEDIUM or -ENOTEMPTY; the
 * mount point into target. */
int sc_bpffs_mountable(const char *dir, char *target, size_t len);
/* ---- the instance lock (lock.c) ----------------------------------------- */
/* Take the instance lock (blocks until free): fd, or -errno (-ESTALE when
 * the directory was removed by a concurrent detach while we waited). */
int sc_lock_dir(const char *dir);
/*
 * The same for attach: creates the directory (0700) when missing, marking it
 * with SC_PIN_CREATED so that the last detach removes it (and only then),
 * and creates it again if a concurrent detach removed it meanwhile.
 */
int sc_lock_dir_create(const char *dir);

/* ---- the instance's network namespace (netns.c) ------------------------ */
/* A network namespace: inode of /proc/self/ns/net and its cookie (never
 * reused while the system runs; 0 where the kernel has none). */
struct sc_netns {
	unsigned long ino;
	unsigned long long cookie;
};
/* The namespace recorded in the pin directory: 0, -ENOENT (none), -errno. */
int sc_netns_pinned(const char *dir, struct sc_netns *ns);
/* Record this namespace unless one is recorded; 0 or -errno. */
int sc_netns_record(const char *dir);
/* Remove the record (with the last pin). */
void sc_netns_unrecord(const char *dir);
/* 0 when the instance is this namespace's (or records none), -EXDEV when
 * another's, -errno. */
int sc_netns_check(const char *dir);
/* "net:[INO] ('NAME')" for messages (NAME from /run/netns, when found). */
void sc_netns_describe(const struct sc_netns *ns, char *buf, size_t len);
/* The message of -EXDEV for the instance in dir: both namespaces named. */
void sc_netns_strerror(const char *dir, char *buf, size_t len);

/* ---- the maps (state.c) --------------------------------------------------- */
/*
 * Open the pinned maps of an attached instance; lock: take the instance
 * lock first (for commands that change state). 0 or -errno (see above).
 */
int sc_state_open(const struct sc_opts *o, struct sc_state *st, int lock);
/* Remove the short-class duplication of the instance in @dir (its dup/
 * subdirectory, cmd_dup.c): with the instance's last pins. */
void sc_dup_remove(const char *dir);
/* The copy flag (FS_DUP_F_DUP) of dir's dup/: set to want (0, 1; -1:
 * read only), reported in *copy; the agent's dup_flag_fn
 * (health/dup_agent.h). 0, -ENOENT (not attached), -EADDRNOTAVAIL (on,
 * without the LONG peer's address) or -errno. */
int sc_dup_copy_flag(const char *dir, int want, bool *copy);
/* The counters of dir's dup/ summed over CPUs (enum fs_dup_stat): 0,
 * -ENOENT (not attached) or -errno. */
int sc_dup_counters(const char *dir, __u64 sum[FS_DUP_STAT_MAX]);
/* What doctor checks of dir's dup/: its config, and which of its links
 * are pinned (fs_dup at SHORT's egress, fs_dedup at each tunnel's
 * ingress). 0, -ENOENT (not attached) or -errno. */
struct sc_dup_check {
	struct dup_config dc;
	bool dup_link, dedup_link[2];	/* [0] SHORT, [1] LONG */
};
int sc_dup_check(const char *dir, struct sc_dup_check *c);
/* The options of "dup attach"; a config file's [dup] keys include them
 * (but copy, a command line option only: the file's copy is the agent's,
 * health/dup_agent.h). */
struct sc_dup_attach_args {
	__u32 given;
	char short_dev[IFNAMSIZ];
	char long_dev[IFNAMSIZ];
	bool copy;
	const char *peer_mac;
	__u32 window_ms;
	__u32 entries;
};
extern const struct sc_option sc_dup_attach_opts[];
/* The defaults of the unset members (window, entries). */
void sc_dup_attach_defaults(struct sc_dup_attach_args *a);
/*
 * What a config file's [dup] does to the live dup/ of dir ("apply"):
 * want NULL (attach = no): remove it; else attach it on want's devices
 * (copy off: the agent's), leave it when it matches, change the window or
 * the peer's address in place (the copy flag kept), attach it again when
 * the devices or the table size differ. A device named in mk[] is one
 * apply makes (again): its dup is attached again whatever it was.
 */
enum sc_dup_action {
	SC_DUP_KEEP,		/* nothing to do */
	SC_DUP_ATTACH,		/* none live: attach */
	SC_DUP_REATTACH,	/* detach, attach with want */
	SC_DUP_CHANGE,		/* window or peer address in place */
	SC_DUP_REMOVE,		/* want NULL: detach */
};
/* The action, and the live one's and want's descriptions for apply's
 * list ("short sdwan0, long sdwan1, window 1 s, entries 65536"). */
enum sc_dup_action sc_dup_plan(const char *dir, const struct sc_dup_attach_args *want,
			       bool remade, char *from, size_t flen, char *to, size_t tlen);
/* A device dup can run on: it exists and is an Ethernet device (the
 * copies are Ethernet frames, VXLAN's). 0, or FS_EXIT_RUNTIME with the
 * reason in err. */
int sc_dup_dev_check(const char *dev, char *err, size_t len);
/* What sc_dup_apply() replaced, for sc_dup_restore(). */
struct sc_dup_saved {
	bool done;		/* something changed */
	bool had;		/* a dup/ was live before */
	struct dup_config dc;	/* its config (copy flag included) */
	__u32 entries;		/* its tables' size */
};
/* Make dir's dup/ what sc_dup_plan() says, under the instance lock: an
 * exit code (one error line printed; dup/ as it was on a failure). */
int sc_dup_apply(const struct sc_opts *o, const struct sc_dup_attach_args *want, bool remade,
		 struct sc_dup_saved *saved);
/* Put back what sc_dup_apply() replaced (a later step of apply failed). */
void sc_dup_restore(const struct sc_opts *o, const struct sc_dup_saved *saved);
void sc_state_close(struct sc_state *st);
/* sc_state_open() for a command: prints the one error line, returns an
 * exit code. */
int sc_state_open_cmd(const struct sc_opts *o, struct sc_state *st, int lock);

/* These return 0 or -errno. */
int sc_config_read(const struct sc_state *st, struct split_config *cfg);
int sc_config_write(const struct sc_state *st, const struct split_config *cfg);
/* Sum the per-CPU counters into out[FS_STAT_MAX]. */
int sc_stats_read(const struct sc_state *st, __u64 out[FS_STAT_MAX]);
/*
 * The agent's view of an instance's spill (S2's glue in run.c): st with
 * only config_fd, stats_fd, spill_fd and clock_prog_fd open (no lock; the
 * other fds -1),
 * for sc_config_read() (FS_CFG_F_SPILL, dscp_spill), sc_stats_read()
 * (bytes_short, bytes_spill, ...), sc_spill_read() and sc_spill_write();
 * sc_state_close() closes it. Four pins: cheap enough to open per tick,
 * which follows a detach and a new attach. 0, -EOPNOTSUPP (the instance
 * has no fs_spill: attached by a splitctl without spill), or an error of
 * sc_state_open(); sc_state_strerror() words each.
 */
int sc_spill_open(const struct sc_opts *o, struct sc_state *st);
/* fs_spill: the agent's entry (its generation and grants) and the
 * datapath's (grants taken, moved): 0, -EOPNOTSUPP (an instance without
 * it), or -errno. */
int sc_spill_read(const struct sc_state *st, struct fs_spill *agent, struct fs_spill *dp);
/* Write the agent's entry of fs_spill whole: generation gen (0: none
 * spills, every spilled flow is long again) and grants (cumulative; the
 * datapath takes one while its taken < grants), with a lease of
 * FS_SPILL_LEASE_MS from now (the agent renews it by writing again).
 * 0, -EOPNOTSUPP or -errno. */
int sc_spill_write(const struct sc_state *st, __u16 gen, __u64 grants);
/* What is left of the lease of the agent's entry @agent, in ms (<= 0:
 * expired, nothing spills; 0 also without a generation). 0 or -errno. */
int sc_spill_lease_ms(const struct sc_state *st, const struct fs_spill *agent, __s64 *left_ms);
/* Add to one per-CPU counter from user space (e.g. FLOWS_SWEPT). */
int sc_stats_add(const struct sc_state *st, enum fs_stat id, __u64 n);
/* Bytes a map holds locked (memlock of /proc/self/fdinfo), 0 if unknown. */
__u64 sc_map_memlock(int fd);

/* ---- the datapath clock (clock.c) ---------------------------------------- */
/* Current bpf_jiffies64() and the kernel's HZ, for comparing last_seen. */
int sc_clock_now(const struct sc_state *st, __u64 *jiffies, unsigned int *hz);
/* The kernel's HZ (CONFIG_HZ from /proc/config.gz, else measured). */
unsigned int sc_kernel_hz(int clock_prog_fd);

/* ---- hooks (hook.c) ------------------------------------------------------ */
/* Where the splitter runs on an interface. */
enum sc_hook { SC_HOOK_AUTO, SC_HOOK_XDP, SC_HOOK_TC };

/* "auto", "xdp", "tc" */
const char *sc_hook_name(enum sc_hook hook);
/* The hook that keeps throughput with exact counts on @ifname (never
 * SC_HOOK_AUTO), and why in @why. */
enum sc_hook sc_hook_auto(const char *ifname, char *why, size_t len);
/* Create the bpf_link of @prog_fd at @hook (@xdp_flags for XDP): a link
 * fd, or -errno. */
int sc_hook_link_create(int prog_fd, int ifindex, enum sc_hook hook,
			__u32 xdp_flags);
/* The hook of a bpf_link type; SC_HOOK_AUTO when it is neither. */
enum sc_hook sc_hook_of_link_type(__u32 link_type);
/* Programs at TCX ingress of @ifindex (ours included), or -errno. */
int sc_hook_tc_count(int ifindex);
/* true while program @prog_id is attached to @ifindex at @hook */
bool sc_hook_prog_attached(int ifindex, enum sc_hook hook, __u32 prog_id);
/* The observer's link: TCX egress of @ifindex; a link fd or -errno. */
int sc_hook_observer_create(int prog_fd, int ifindex);
/* true while program @prog_id is attached at TCX egress of @ifindex */
bool sc_hook_observer_attached(int ifindex, __u32 prog_id);
/* What the hook and mode of an interface cost (status), into buf. */
struct sc_iface;
void sc_hook_cost(const struct sc_iface *ifc, char *buf, size_t len);

/* ---- the attached interfaces (ifaces.c) --------------------------------- */
/* The mode of an interface that was removed under the splitter. */
#define SC_IFACE_REMOVED "gone"
/* An interface the splitter is attached to (from the link pins). */
struct sc_iface {
	int ifindex;
	char name[32];		/* IF_NAMESIZE, "?" when the interface is gone */
	__u32 prog_id;
	__u32 link_id;
	enum sc_hook hook;	/* SC_HOOK_XDP or SC_HOOK_TC */
	const char *mode;	/* XDP: "native", "generic"; TC: "tcx"; "?", or
				 * SC_IFACE_REMOVED: the interface was removed (the
				 * link is defunct) */
	bool observer;		/* its observer link (SC_PIN_OBSERVER_FMT)
				 * is pinned and attached at TCX egress */
	__u32 observer_prog_id;
	__u32 observer_link_id;
};
/* The interface was removed: its link is defunct (mode "gone", name "?"),
 * the splitter runs nowhere there, and its pins stay until "detach
 * --gone" (or --all). */
bool sc_iface_removed(const struct sc_iface *ifc);
/* ifindex an XDP or TCX link pin is attached to: 0 defunct, -1 no such
 * link there */
int sc_link_ifindex(const char *path);
/* Fill up to max entries; returns the count, or -errno. */
int sc_ifaces_list(const char *dir, struct sc_iface *out, int max);
/*
 * Does ifname run the splitter of another flowsplit instance (another pin
 * directory than dir), at XDP or TC ingress: a program there using a flow
 * table (FS_MAP_FLOWS4) other than own_flows (a map id)? Both would run,
 * each marking the flows by its own table and config. 0, or -EBUSY with
 * the one-line reason (naming its program id) in err.
 */
int sc_other_splitter(const char *ifname, __u32 own_flows, const char *dir, char *err,
		      size_t len);
/* The id of a map (0 for fd < 0 or an error). */
__u32 sc_flows_map_id(int map_fd);
/* The ifindexes attached (SC_PIN_ATTACHED_FMT) whose link pin is gone:
 * the count, or -errno. */
int sc_links_missing(const char *dir, int *ifindex, int max);
#define SC_MAX_IFACES 64

/* ---- settings (settings.c) ---------------------------------------------- */
/*
 * The live settings, one table (sc_setting_opts) for the attach options,
 * the "set" pairs and the [splitter] keys of a config file: parsed and
 * range-checked once into v, with given saying which were set.
 */
enum sc_setting {
	SC_SET_THRESHOLD, SC_SET_IDLE, SC_SET_DSCP_SHORT, SC_SET_DSCP_LONG,
	SC_SET_ENABLED, SC_SET_ACK_SHORT, SC_SET_THRESHOLD_BYTES, SC_SET_RESHORT,
	SC_SET_MIDSTREAM, SC_SET_RESHORT_BOUNDARY, SC_SET_SPILL, SC_SET_DSCP_SPILL,
	SC_SET_MAX
};
struct sc_settings {
	__u32 given;		/* 1 << enum sc_setting */
	struct split_config v;	/* idle_jiffies unused until merged */
};
extern const struct sc_option sc_setting_opts[];

void sc_config_defaults(struct split_config *cfg, unsigned int hz);
/*
 * cfg with the given settings on top (idle_jiffies, reshort_jiffies from
 * hz), then the rules across fields (dscp-short, dscp-long and
 * dscp-spill differ, reshort-gap < idle-timeout), the only place they are
 * checked.
 * 0, or -EINVAL with the reason in err and cfg unchanged.
 */
int sc_settings_merge(struct split_config *cfg, const struct sc_settings *s,
		      unsigned int hz, char *err, size_t errlen);

/* ---- attach (attach.c) -------------------------------------------------- */
enum sc_xdp_mode { SC_MODE_AUTO, SC_MODE_NATIVE, SC_MODE_GENERIC };

/* The rows of attach's table (sc_attach_opts, cmd_attach.c): bit i of
 * given says whether row i was given. */
enum sc_attach_opt {
	SC_ATTACH_HOOK, SC_ATTACH_MODE, SC_ATTACH_SETTINGS, SC_ATTACH_FLOWS,
	SC_ATTACH_IFNAME,
};
#define sc_attach_given(a, opt) ((a)->given & (1U << (opt)))
/* The arguments of "attach" (and of the [splitter] section). */
struct sc_attach_args {
	__u32 given;
	int hook;			/* enum sc_hook; AUTO: per interface */
	int mode;			/* enum sc_xdp_mode; given: hook xdp */
	struct sc_settings settings;	/* on top of the live or default config */
	__u32 flows;			/* table size per family; 0 = default / keep */
	char ifname[IFNAMSIZ];
};
extern const struct sc_option sc_attach_opts[];

/* The interface exists and is up: 0, else an exit code (FS_EXIT_USAGE:
 * no such interface) with the reason in err. Prints nothing. */
int sc_iface_usable(const char *ifname, char *err, size_t len);
/* What an attach did, for its JSON output. */
struct sc_attach_result {
	int ifindex;
	enum sc_hook hook;
	const char *mode;	/* "native", "generic", "tcx", "?" */
	bool upgrade;		/* the program was swapped in place */
	bool hook_auto;		/* the hook was picked by --hook auto, why: */
	char why[256];
};
/* What a detach did. */
struct sc_detach_result {
	char names[SC_MAX_IFACES][IF_NAMESIZE];	/* "?" for a vanished interface */
	int n;
	bool pins_removed;	/* the last interface went: no pins left */
};

/* Attach (or upgrade in place) on one interface; prints its own errors;
 * returns an exit code. res (may be NULL) says what was done. */
int sc_attach_report(const struct sc_opts *o, const char *ifname,
		     const struct sc_attach_args *a, struct sc_attach_result *res);
int sc_attach(const struct sc_opts *o, const char *ifname,
	      const struct sc_attach_args *a);
/* Detach one interface (ifname) or all (ifname == NULL); res (may be NULL)
 * lists what was detached. */
int sc_detach_report(const struct sc_opts *o, const char *ifname,
		     struct sc_detach_result *res);
int sc_detach(const struct sc_opts *o, const char *ifname);
/* Forget the interfaces that were removed (their defunct pins: they
 * attach nothing); the others stay attached, and the instance's pins go
 * only when no interface is left. */
int sc_detach_removed(const struct sc_opts *o, struct sc_detach_result *res);
/* Are there pins of an instance in dir (links, maps or programs)? */
bool sc_instance_present(const char *dir);

#endif /* SPLITCTL_H */
