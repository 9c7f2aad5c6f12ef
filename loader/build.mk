# SPDX-License-Identifier: GPL-2.0
# loader/: splitctl, the operator's CLI.

SPLITCTL_SRCS := $(wildcard loader/*.c)
SPLITCTL_OBJS := $(SPLITCTL_SRCS:%.c=$(BUILD)/%.o)
SPLITCTL_LIBS := $(shell $(PKG_CONFIG) --libs libbpf libxdp zlib libmicrohttpd) -lpthread -lcrypt

$(BUILD)/loader/%.o: loader/%.c $(BUILD)/splitter.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iloader -Ihealth -Itunnel-cfg $(FSLIB_CFLAGS) -c $< -o $@

# "splitctl dup" loads the duplication's own object
$(BUILD)/loader/cmd_dup.o: $(BUILD)/dup.skel.h

# second expansion: tunnel-cfg/build.mk (defining TCFG_LIB) is read after this;
# health/ (HEALTH_LIB) calls tunnel-cfg, which calls lib/ (FSLIB: the output
# layer, parsers): linked in that order
$(BUILD)/splitctl: $(SPLITCTL_OBJS) $$(HEALTH_LIB) $$(TCFG_LIB) $$(FSLIB)
	$(CC) $(CFLAGS) $(LDFLAGS) $(SPLITCTL_OBJS) -o $@ $(HEALTH_LIB) $(TCFG_LIB) $(TCFG_LIBS) $(FSLIB) \
		$(FSLIB_LIBS) $(SPLITCTL_LIBS)

ALL_TARGETS += $(BUILD)/splitctl

# make install|uninstall [DESTDIR=...] [PREFIX=/usr/local] [UNITDIR=...];
# the unit gets the splitctl of this PREFIX; UNITDIR: where the unit goes
# (the administrator's /etc/systemd/system, a package's systemd unit
# directory). uninstall leaves the operator's config.
PREFIX ?= /usr/local
UNITDIR ?= /etc/systemd/system
INSTALLED := $(PREFIX)/sbin/splitctl $(PREFIX)/share/man/man8/splitctl.8 \
	$(PREFIX)/share/bash-completion/completions/splitctl \
	$(UNITDIR)/flowsplit.service /etc/flowsplit/flowsplit.conf.example
.PHONY: install uninstall
install: $(BUILD)/splitctl
	install -D -m 0755 $(BUILD)/splitctl $(DESTDIR)$(PREFIX)/sbin/splitctl
	install -D -m 0644 loader/splitctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/splitctl.8
	install -D -m 0644 loader/splitctl.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/splitctl
	@mkdir -p $(DESTDIR)$(UNITDIR)
	sed 's|/usr/local/sbin/splitctl|$(PREFIX)/sbin/splitctl|g' loader/flowsplit.service \
		>$(DESTDIR)$(UNITDIR)/flowsplit.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/flowsplit.service
	install -D -m 0644 loader/flowsplit.conf.example $(DESTDIR)/etc/flowsplit/flowsplit.conf.example

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)/etc/flowsplit 2>/dev/null
