#!/usr/bin/env bash
# The CI example (Examples/CI/perf-gate.yml) on a machine nothing was
# installed on, with no hardware instruction counter: its run: steps
# (scripts/run-workflow.py --real --run-installs) in a new Debian bookworm
# root, as GitHub runs them in the job's swift:6.3 container. The root holds
# what that image holds for the toolchain itself, and no more; the toolchain
# is this machine's /opt/swift, read-only; SwiftPM's caches start empty. So the
# workflow's install step must install every library and instruction counter
# the later steps use, and the compare step must count the suite's
# instructions under Valgrind's callgrind or QEMU and find the regression the
# fixture's second commit makes (the Gate exits 1).
#
# usage, as root:
#   bash scripts/check-workflow-in-debian-root.sh [DIR]
#   bash scripts/check-workflow-in-debian-root.sh --prepare [DIR]
#   bash scripts/check-workflow-in-debian-root.sh --resume [DIR]
#
# DIR is the root (default /tmp/strobe-debian-root); it must not exist, but
# with --resume. Plainly, the script makes the root, runs the workflow in it
# and removes it (KEEP=1 keeps it). --prepare stops before the first build
# and keeps the root (debootstrap and the package installs are light work;
# the builds and the counted runs are not, and may have to wait for a quiet
# machine); --resume runs the workflow in a root --prepare made. The
# workflow's output goes to LOG (default out/debian-root-workflow.log), and
# the summary is printed and added to it: the CPU, the load average, the wall
# time of each part, each step's wall time, and the compare log's line about
# instructions. Exits non-zero if any part failed.
#
# Minutes: debootstrap and the toolchain's packages a few, then the
# workflow's release builds and its budget of 5 minutes of rounds.
set -euo pipefail
repository=$(cd "$(dirname "$0")/.." && pwd)

phase=all
case "${1:-}" in
    --prepare) phase=prepare; shift ;;
    --resume) phase=resume; shift ;;
    -*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
dir=${1:-/tmp/strobe-debian-root}
dir=$(realpath -m "$dir")
log=${LOG:-$repository/out/debian-root-workflow.log}
keep=${KEEP:-0}
[ "$phase" = prepare ] && keep=1
mirror=http://deb.debian.org/debian
# What the swift:6.3 image (Ubuntu 24.04) installs beside the toolchain, by
# its Debian 12 names (GCC 12's libraries for 13's), with the CA certificates
# SwiftPM's clones need; and what the script that plays the workflow needs.
# Of what the workflow's install step names, only the few the toolchain needs
# too (git, pkg-config, zlib1g-dev). The swift driver itself loads ncurses.
toolchain_packages=(binutils git unzip gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev
    libsqlite3-0 libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config tzdata zlib1g-dev ca-certificates)
runner_packages=(python3 python3-yaml)
# Inside the root: the clone of this repository, the workflow's working
# folder, and HOME, which is where GitHub puts it in a container job. HOME is
# new, so SwiftPM's caches (~/.cache/org.swift.swiftpm, ~/.swiftpm) are empty.
clone=/github/strobe
work=/github/workflow
home=/github/home
times="$dir/strobe-check-times"

if [ "$(id -u)" != 0 ]; then echo "check-workflow-in-debian-root: run it as root" >&2; exit 2; fi
if [ ! -x /opt/swift/usr/bin/swift ]; then echo "check-workflow-in-debian-root: no toolchain at /opt/swift" >&2; exit 2; fi
if [ "$phase" = resume ]; then
    [ -f "$times" ] || { echo "check-workflow-in-debian-root: $dir is not a root --prepare made" >&2; exit 2; }
elif [ -e "$dir" ]; then
    echo "check-workflow-in-debian-root: $dir exists; the root must be new (or --resume it)" >&2; exit 2
fi

say() { echo "check-workflow-in-debian-root: $*"; }
# part NAME SECONDS: a part's wall time, kept in the root so that --resume
# prints the parts --prepare timed.
part() { printf '%s\t%s\n' "$1" "$2" >> "$times"; }
in_root() {
    chroot "$dir" /usr/bin/env -i HOME="$home" LANG=C.UTF-8 TERM=dumb \
        PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# Where this machine's git fetches package URLs from: the url.BASE.insteadOf
# settings of its system git configuration (a GitHub URL answered from a
# local mirror, say). The root gets the same settings, and each local folder
# they name bound read-only at the same path, so that SwiftPM fetches the
# packages there as it does here; its caches in the root start empty all the
# same.
rewrites=()
mirror_folders=()
while read -r key value; do
    base=${key#url.}
    base=${base%.insteadof}
    rewrites+=("$base"$'\t'"$value")
    if [[ "$base" == /* ]] && [ -d "$base" ]; then
        folder=${base#/}
        folder=${folder%/}
        case " ${mirror_folders[*]} " in *" $folder "*) ;; *) mirror_folders+=("$folder") ;; esac
    fi
done < <(git config --system --get-regexp '^url\..*\.insteadof$' 2>/dev/null || true)

# However the script ends: every mount under the root is undone, deepest
# first, and the root is removed unless kept. It is removed only once nothing
# is mounted under it: removing it with /dev or /sys still bound would reach
# this machine's own.
mounts=(opt/swift "${mirror_folders[@]}" proc sys dev dev/pts)
cleanup() {
    local status=$? index target
    for ((index = ${#mounts[@]} - 1; index >= 0; index--)); do
        target="$dir/${mounts[index]}"
        if mountpoint -q "$target" 2>/dev/null; then
            umount "$target" 2>/dev/null || umount -l "$target" || true
        fi
    done
    if [ "$keep" != 1 ] && [ -d "$dir" ]; then
        if awk -v root="$dir/" 'index($2, root) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
            say "something is still mounted under $dir; it is left in place" >&2
        else
            rm -rf --one-file-system "$dir"
        fi
    elif [ -d "$dir" ]; then
        say "the root is kept: $dir"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The root's kernel views and devices, this machine's resolver, and the
# toolchain at the path the workflow's PATH names and the folders git fetches
# packages from, bound read-only so that no step can change them.
mount_all() {
    local folder
    for folder in opt/swift "${mirror_folders[@]}"; do
        mkdir -p "$dir/$folder"
        mount --bind "/$folder" "$dir/$folder"
        mount -o remount,bind,ro "$dir/$folder"
    done
    mount -t proc proc "$dir/proc"
    mount -t sysfs sysfs "$dir/sys"
    mount --bind /dev "$dir/dev"
    mount --bind /dev/pts "$dir/dev/pts"
    cp /etc/resolv.conf "$dir/etc/resolv.conf"
}

if [ "$phase" != resume ]; then
    # debootstrap, on this machine, when it is missing.
    if ! command -v debootstrap >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
    fi

    # The root: Debian 12's minimal base (apt, dpkg, bash, coreutils; no
    # compiler, no git, no Python).
    start=$SECONDS
    debootstrap --variant=minbase bookworm "$dir" "$mirror"
    part debootstrap $((SECONDS - start))
    mount_all
    # No service starts inside the root (a package's postinst may try).
    printf '#!/bin/sh\nexit 101\n' > "$dir/usr/sbin/policy-rc.d"
    chmod +x "$dir/usr/sbin/policy-rc.d"

    # What the container image carries for the toolchain, and Python for the
    # script that plays the workflow; apt's defaults, as the image's
    # Dockerfile installs them.
    start=$SECONDS
    in_root apt-get update -qq
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${toolchain_packages[@]}" "${runner_packages[@]}"
    in_root apt-get clean
    part "toolchain packages" $((SECONDS - start))
    # The toolchain runs in the root: nothing it loads is missing.
    in_root swift --version
    for rewrite in "${rewrites[@]}"; do
        git config --file "$dir/etc/gitconfig" --add "url.${rewrite%%$'\t'*}.insteadOf" "${rewrite#*$'\t'}"
    done

    # This repository's committed HEAD. The script that plays the workflow is
    # this checkout's, so a change to it is tried before it is committed; the
    # product, the workflow file and the fixture all come from HEAD.
    git clone -q "$repository" "$dir$clone"
    if ! cmp -s "$repository/scripts/run-workflow.py" "$dir$clone/scripts/run-workflow.py"; then
        cp "$repository/scripts/run-workflow.py" "$dir$clone/scripts/run-workflow.py"
        say "scripts/run-workflow.py: this checkout's, which differs from HEAD's"
    fi
    mkdir -p "$dir$home"
    say "the root is ready: $dir (HEAD $(git -C "$dir$clone" rev-parse --short HEAD))"
    if [ "$phase" = prepare ]; then
        say "next: bash $0 --resume $dir"
        exit 0
    fi
else
    mount_all
fi

# Before the workflow: none of what its install step names is installed, but
# the toolchain's own packages; and the home is empty.
named=$(in_root python3 - "$clone/Examples/CI/perf-gate.yml" <<'PY'
import sys, yaml
for step in yaml.safe_load(open(sys.argv[1]))["jobs"]["perf"]["steps"]:
    run = step.get("run", "").replace("\\\n", " ")
    for line in run.splitlines():
        if "apt-get install" in line:
            print(" ".join(word for word in line.split("apt-get install", 1)[1].split() if not word.startswith("-")))
PY
)
[ -n "$named" ] || { say "the workflow has no apt-get install step" >&2; exit 1; }
present=()
for package in $named; do
    case " ${toolchain_packages[*]} " in *" $package "*) continue ;; esac
    if in_root dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        present+=("$package")
    fi
done
if [ ${#present[@]} -gt 0 ]; then say "installed before the workflow ran: ${present[*]}" >&2; exit 1; fi
if [ -n "$(ls -A "$dir$home")" ]; then say "HOME ($home) is not empty" >&2; exit 1; fi
say "before the workflow, none of these is installed: $(for package in $named; do
    case " ${toolchain_packages[*]} " in *" $package "*) ;; *) printf '%s ' "$package" ;; esac; done)"

# The workflow's run: steps, its install step with the real apt-get.
mkdir -p "$(dirname "$log")"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$SECONDS
workflow_status=0
in_root bash -c "cd $clone && python3 scripts/run-workflow.py --real --run-installs $work" 2>&1 | tee "$log" \
    || workflow_status=$?
part "the workflow's steps" $((SECONDS - start))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
counted=$(grep -h '^instructions:' "$dir$work/workspace/compare.log" 2>/dev/null || true)

# The summary, printed and added to the log.
{
    echo
    echo "== summary"
    cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
    family=$(lscpu | sed -n 's/^CPU family: *//p' | head -1)
    model=$(lscpu | sed -n 's/^Model: *//p' | head -1)
    echo "CPU: $cpu, family $family model $model; $(nproc) cores"
    echo "load average (1, 5, 15 min): $load_before before the workflow, $load_after after"
    echo "wall time of each part:"
    while IFS=$'\t' read -r name seconds; do
        printf '  %6d s  %s\n' "$seconds" "$name"
    done < "$times"
    echo "the workflow's steps, as run-workflow.py timed them:"
    grep -E '^run-workflow: +[0-9.]+ s  ' "$log" | sed 's/^run-workflow: /  /' || echo "  (none: it stopped early)"
    echo "compare.log: ${counted:-no line about instructions}"
    grep -h "the gate's exit status" "$log" | sed 's/^/  /' || true
    echo "run-workflow.py: exit status $workflow_status"
} | tee -a "$log"

if [ "$workflow_status" != 0 ]; then say "the workflow failed; see $log" >&2; exit 1; fi
case "$counted" in
    "instructions: counted by"*) ;;
    *) say "compare counted no instructions" >&2; exit 1 ;;
esac
say "the workflow installed what it needed, counted instructions and found the regression"
