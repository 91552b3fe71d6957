# Sourced by the scripts/measure-*.sh scripts, where they start measuring.
# With BUSY=1 a shell loop that never sleeps keeps one core occupied until
# the script exits, as a parallel build on a CI runner would.
busy_pid=""
if [ "${BUSY:-0}" = 1 ]; then
    (while :; do :; done) &
    busy_pid=$!
    trap 'kill "$busy_pid" 2>/dev/null || true' EXIT
fi

# machine_line [DETAIL]: the line every figure is printed under, "CPU: AMD
# EPYC, family 25 model 17; 2 cores; DETAIL; one core busy".
machine_line() {
    local cpu family model
    cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
    family=$(lscpu | sed -n 's/^CPU family: *//p' | head -1)
    model=$(lscpu | sed -n 's/^Model: *//p' | head -1)
    echo "CPU: $cpu, family $family model $model; $(nproc) cores;${1:+ $1;} $([ -n "$busy_pid" ] && echo "one core busy" || echo "nothing else started")"
}
