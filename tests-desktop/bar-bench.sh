#!/bin/bash
# The shortcuts bar's numbers (issue 28; BENCHMARKS.md), beside wvkbd measured the same way,
# in headless sway as the session's user. A stand-in for the service (bar-standin.py) feeds
# the bar: a hardware keyboard present, a toolbar of 12 commands, then SECONDS (default 10)
# of silence, then N (default 20) HUD show/hide pairs, 0.5 s apart.
#   - idle wake-ups: context switches of all the bar's threads (voluntary + involuntary,
#     /proc/PID/task/*/status) over SECONDS of silence with the toolbar shown;
#   - RSS and PSS (smaps_rollup) then;
#   - HUD latency: from the stand-in writing a `hud` show to the bar's frame being painted
#     and committed to the compositor (GTK's after-paint, KBD_BAR_TRACE), one clock
#     (CLOCK_MONOTONIC): median, p95, max over N;
#   - start: from exec to the toolbar's first frame (the stand-in answers at once);
#   - wvkbd-mobintl (shown): the same idle wake-ups, RSS and PSS.
#
#   tests-desktop/bar-bench.sh [BUILD_DIR] [N] [SECONDS]   (root; setup-host.sh first; a
#                                                          release build measures what users run)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
throwaway_run bar-bench "${1:-$here/../.build/release}" kbd-commandd-bar
count=${2:-20}
quiet=${3:-10}
standin= bar=
cleanup() {
    [ -n "$bar" ] && kill "$bar" 2>/dev/null && wait "$bar" 2>/dev/null
    [ -n "$standin" ] && kill "$standin" 2>/dev/null && wait "$standin" 2>/dev/null
    bar= standin=
    "$here/session.sh" stop >/dev/null 2>&1 || true
}
trap 'cleanup; remove_throwaway' EXIT
chown "$KBD_USER" "$work"

# switches PID: context switches of every thread of PID so far.
switches() {
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { s += $2 } END { print s + 0 }'
}
threads() { ls /proc/"$1"/task | wc -l; }
kib() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/smaps_rollup"; }
# own PID: the RSS (KiB) of the mappings of PID's own executable (the rest is libraries and heap).
own() {
    local exe; exe=$(readlink "/proc/$1/exe")
    awk -v exe="$exe" '/^[0-9a-f]+-[0-9a-f]+ / { mine = ($6 == exe) } mine && $1 == "Rss:" { s += $2 } END { print s + 0 }' "/proc/$1/smaps"
}

"$here/session.sh" start >/dev/null 2>&1 || die "the session did not start"
spawn_as_user "$work/standin.log" "$PYTHON" "$bin/bar-standin.py" "$work/socket" "$work/sent" "$count" "$(( quiet + 3 ))"
standin=$SPAWNED_PID
wait_for 5 test -S "$work/socket" || die "the stand-in did not listen"
EXTRA_ENV=(KBD_BAR_TRACE=1)
start_us=$("$PYTHON" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)')
spawn_as_user "$work/bar.log" "$bin/kbd-commandd-bar" --socket "$work/socket" --config /nonexistent
bar=$SPAWNED_PID
unset EXTRA_ENV
wait_for 10 grep -q '^toolbar-frame' "$work/bar.log" || { cat "$work/bar.log"; die "the bar did not paint its toolbar"; }
first_frame_ms=$(awk -v t0="$start_us" '/^toolbar-frame/ { printf "%.1f", ($2 - t0) / 1000; exit }' "$work/bar.log")
sleep 1
s0=$(switches "$bar"); sleep "$quiet"; s1=$(switches "$bar")
bar_wakeups=$(( s1 - s0 )) bar_rss=$(kib "$bar" Rss) bar_pss=$(kib "$bar" Pss) bar_threads=$(threads "$bar") bar_own=$(own "$bar")
wait_for $(( count + 10 )) grep -q '^done' "$work/standin.log" || die "the stand-in did not finish"
sleep 0.5
latency=$("$PYTHON" - "$work/sent" "$work/bar.log" <<'PY'
import sys
sent = [int(l) for l in open(sys.argv[1])]
frames = [int(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("hud-frame ")]
reads = [int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("kbd-commandd-bar: hud-event ")]
assert len(frames) == len(sent) == len(reads), (len(sent), len(frames), len(reads))
def stats(xs):
    xs = sorted(x / 1000 for x in xs)
    return "median %.1f, p95 %.1f, max %.1f ms" % (xs[len(xs) // 2], xs[min(len(xs) - 1, int(len(xs) * 0.95))], xs[-1])
print("event->frame: %s; event->read: %s (N=%d)" % (stats([f - s for f, s in zip(frames, sent)]), stats([r - s for r, s in zip(reads, sent)]), len(sent)))
PY
) || latency="could not be computed"
cleanup

"$here/session.sh" start >/dev/null 2>&1 || die "the session did not start"
wvkbd=$("$here/session.sh" wvkbd 2>/dev/null | tail -1)
sleep 1
s0=$(switches "$wvkbd"); sleep "$quiet"; s1=$(switches "$wvkbd")
wv_wakeups=$(( s1 - s0 )) wv_rss=$(kib "$wvkbd" Rss) wv_pss=$(kib "$wvkbd" Pss) wv_threads=$(threads "$wvkbd") wv_own=$(own "$wvkbd")
cleanup

echo "| program | idle wake-ups in ${quiet} s | RSS KiB | PSS KiB | of which its own binary KiB | threads |"
echo "|---|---|---|---|---|---|"
echo "| kbd-commandd-bar (toolbar shown) | $bar_wakeups | $bar_rss | $bar_pss | $bar_own | $bar_threads |"
echo "| wvkbd-mobintl (shown) | $wv_wakeups | $wv_rss | $wv_pss | $wv_own | $wv_threads |"
echo "bar start (exec) to its toolbar's first frame: ${first_frame_ms} ms (connect, subscribe, GTK start)"
echo "bar HUD $latency"
