# own_run_probe.sh - sourced first (before lib.sh) by a test whose root
# agents need a /run/probe of their own: the test runs again in a private
# mount namespace with a tmpfs there, so the host's agent, or another
# test's, is not disturbed.  PROBE_OWN_RUN is set inside; without root or
# unshare -m it stays unset, and the test skips.
if [ -z "${PROBE_OWN_RUN:-}" ] && [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	mkdir -p /run/probe
	exec env PROBE_OWN_RUN=1 unshare -m --propagation private sh -c \
		'mount -t tmpfs -o mode=0755 probe /run/probe && exec sh "$0"' "$0"
fi
