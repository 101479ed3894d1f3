#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A systemctl for the protect tests (test_ctl.c, SECMEMCTL_SYSTEMCTL):
# only what secmemctl asks, answered from the directory $FAKE_SYSTEMD:
#   units/NAME    the "Key=Value" lines `systemctl show NAME` prints (an
#                 instance foo@x.service without a file of its own uses
#                 units/foo@.service)
#   unit-dir/     the drop-in directory: their Environment=,
#                 LimitMEMLOCK= and NoNewPrivileges= are merged in as
#                 systemd would (the last
#                 assignment of a variable wins), but only after a
#                 daemon-reload (the state file "loaded" lists them)
#   reload-fails  daemon-reload fails, as without privileges
#   list-units    what `systemctl list-units` prints
# Every call is appended to $FAKE_SYSTEMD/log.
set -u
d=${FAKE_SYSTEMD:?}
echo "$*" >>"$d/log"
case $1 in
daemon-reload)
	if [ -e "$d/reload-fails" ]; then
		echo "Failed to reload daemon: Access denied" >&2
		exit 1
	fi
	# What systemd now knows: a snapshot of the drop-ins.
	rm -rf "$d/loaded"
	cp -r "$d/unit-dir" "$d/loaded"
	exit 0 ;;
list-units)
	cat "$d/list-units" 2>/dev/null
	exit 0 ;;
show) ;;
*)
	echo "fake systemctl: '$1' is not faked" >&2
	exit 1 ;;
esac
for unit; do :; done
file=$unit
case $unit in
*@*.service) [ -e "$d/units/$unit" ] || file=${unit%%@*}@.service ;;
esac
if [ ! -e "$d/units/$file" ]; then
	echo "LoadState=not-found"
	echo "ActiveState=inactive"
	exit 0
fi
grep -v '^Environment=\|^LimitMEMLOCK=\|^NoNewPrivileges=' "$d/units/$file"
{
	sed -n 's/^Environment=//p; s/^LimitMEMLOCK=/=LIMIT /p; s/^NoNewPrivileges=/=NNP /p' "$d/units/$file"
	for f in "$d/loaded/$file.d"/*.conf "$d/loaded/$unit.d"/*.conf; do
		[ -f "$f" ] || continue
		sed -n 's/^Environment=//p; s/^LimitMEMLOCK=/=LIMIT /p; s/^NoNewPrivileges=/=NNP /p' "$f"
	done
} | awk '
	function bytes(v) {
		if (v == "infinity") return v
		if (v ~ /K$/) return sprintf("%.0f", v * 1024)
		if (v ~ /M$/) return sprintf("%.0f", v * 1048576)
		if (v ~ /G$/) return sprintf("%.0f", v * 1073741824)
		return v
	}
	/^=LIMIT / { lim = bytes($2); next }
	/^=NNP / { nnp = $2; next }
	{ for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k)
		if (!(k in val)) order[n++] = k; val[k] = $i } }
	END {
		s = ""
		for (i = 0; i < n; i++) s = s (i ? " " : "") val[order[i]]
		print "Environment=" s
		print "LimitMEMLOCK=" (lim == "" ? 8388608 : lim)
		print "NoNewPrivileges=" (nnp == "" ? "no" : nnp)
	}'
