#!/usr/bin/env python3
"""Runs the run: steps of Examples/CI/perf-gate.yml, as GitHub would, on a
fixture repository of two commits whose second makes the lens suite's
regression (the tone curve rebuilt for every band), so a broken step fails
here and not on a user's pull request.

usage: python3 scripts/run-workflow.py --fast STROBE LENS_PERF_TESTS
       python3 scripts/run-workflow.py --real [WORKDIR]
       python3 scripts/run-workflow.py --real --run-installs [WORKDIR]

The steps run in order with bash -eo pipefail, with the job's and step's env,
GITHUB_OUTPUT, and each ${{ }} expression replaced by what the event would
give; `uses:` steps are played by the script (checkout clones the fixture,
the comment reads report.md) or skipped (cache, artifact). Every step must
pass but the Gate, which must exit with the status Compare recorded (0 or 1;
with --real, 1: the regression found).

--fast: the fixture is the lens suite's policy and a file of its settings
(the second commit's makes capture frame allocate once more per iteration);
`swift` and `apt-get` are shims on PATH: `swift build` puts the given debug
STROBE and a LensPerfTests wrapper (the settings from that file) in place,
`apt-get install` checks that each package is installed. Instruction counting
is off and the budget 20 s, so it takes under a minute (`make test-workflow`).

--real: the fixture is a clone of this repository (HEAD, and a commit on top
that makes the rebuilt curve the suite's default kernel); every command is the
real one: the lean strobe and both revisions of the suite are release builds,
and instructions are counted under Valgrind or QEMU (`make check-workflow`;
minutes). The compare log's instruction line is printed.

--real --run-installs: the same, but `apt-get` is the real one, so the install
step installs its packages as it does in the job's fresh container: the run
shows that the step names everything the later steps need. Run it on a machine
nothing was installed on (scripts/check-workflow-in-debian-root.sh runs it in
a new Debian root).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKFLOW = os.path.join(ROOT, "Examples", "CI", "perf-gate.yml")

SWIFT_SHIM = """#!/bin/sh
# swift, as the fast run of the workflow plays it.
set -e
case "$1 $2" in
    "package "*) for dir in . Tools; do [ -d "$dir" ] && : > "$dir/Package.resolved"; done; exit 0 ;;
    "build "*) ;;
    *) echo "swift shim: $*: not played" >&2; exit 3 ;;
esac
product=""; package=.
while [ $# -gt 0 ]; do
    case "$1" in --product) product=$2; shift ;; --package-path) package=$2; shift ;; esac
    shift
done
mkdir -p "$package/.build/release"
case "$product" in
    strobe) ln -sf "$FAKE_STROBE" "$package/.build/release/strobe" ;;
    LensPerfTests)
        printf '#!/bin/sh\\nexec env $(cat "%s/lens.env") "%s" "$@"\\n' "$(pwd)" "$FAKE_LENS" \\
            > "$package/.build/release/LensPerfTests"
        chmod +x "$package/.build/release/LensPerfTests" ;;
    *) echo "swift shim: no product $product" >&2; exit 3 ;;
esac
"""

APT_SHIM = """#!/bin/sh
# apt-get, as the fast run plays it: nothing is installed, but every package
# named must be installed already.
[ "$1" = install ] || exit 0
missing=""
for name in "$@"; do
    case "$name" in -*|install) continue ;; esac
    dpkg -s "$name" >/dev/null 2>&1 || missing="$missing $name"
done
[ -z "$missing" ] || { echo "apt-get shim: not installed:$missing" >&2; exit 100; }
"""


def git(*arguments, cwd):
    subprocess.run(
        ["git", "-c", "user.name=Fixture", "-c", "user.email=fixture@example.com", *arguments],
        cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def fast_fixture(path):
    os.makedirs(os.path.join(path, "Examples", "LensPerfTests"))
    shutil.copy(os.path.join(ROOT, "Examples", "LensPerfTests", "strobe-policy.yml"),
                os.path.join(path, "Examples", "LensPerfTests"))
    with open(os.path.join(path, ".gitignore"), "w") as file:
        file.write(".build/\nPackage.resolved\n")
    git("init", "-q", cwd=path)
    # The second commit's suite allocates once more per iteration of
    # capture frame: a counted change, decided at the first look.
    for settings in ("", " LENS_EXTRA_ALLOCATION=1"):
        with open(os.path.join(path, "lens.env"), "w") as file:
            file.write("LENS_APPLY_FRAMES=1" + settings + "\n")
        git("add", "-A", cwd=path)
        git("commit", "-q", "-m", "settings:" + (settings or " none"), cwd=path)


def real_fixture(path):
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", ROOT, path], check=True)
    main = os.path.join(path, "Examples", "LensPerfTests", "main.swift")
    with open(main) as file:
        text = file.read()
    changed = text.replace("?? .vectorized", "?? .rebuiltCurve")
    if changed == text:
        sys.exit("run-workflow: cannot make the regression: the default kernel moved in " + main)
    with open(main, "w") as file:
        file.write(changed)
    git("commit", "-q", "-a", "-m", "The tone curve is rebuilt for every band", cwd=path)


def expressions(text, values):
    def value(match):
        expression = match.group(1).strip()
        if expression.startswith("hashFiles("):
            return "fixture"
        if expression not in values:
            sys.exit(f"run-workflow: no value for ${{{{ {expression} }}}}")
        return values[expression]
    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("--fast", "--real"):
        sys.exit(__doc__)
    fast = sys.argv[1] == "--fast"
    if fast and len(sys.argv) != 4:
        sys.exit(__doc__)
    run_installs = not fast and sys.argv[2:3] == ["--run-installs"]
    arguments = sys.argv[3:] if run_installs else sys.argv[2:]
    with open(WORKFLOW) as file:
        job = yaml.safe_load(file)["jobs"]["perf"]
    work = tempfile.mkdtemp(prefix="strobe-workflow-") if fast or not arguments else arguments[0]
    fixture = os.path.join(work, "fixture")
    workspace = os.path.join(work, "workspace")
    shims = os.path.join(work, "bin")
    os.makedirs(shims, exist_ok=True)
    os.makedirs(workspace, exist_ok=True)
    environment = dict(os.environ)
    environment["GIT_CONFIG_GLOBAL"] = os.path.join(work, "gitconfig")
    environment.update({key: str(value) for key, value in job.get("env", {}).items()})
    if fast:
        fast_fixture(fixture)
        for name, text in (("swift", SWIFT_SHIM), ("apt-get", APT_SHIM)):
            with open(os.path.join(shims, name), "w") as file:
                file.write(text)
            os.chmod(os.path.join(shims, name), 0o755)
        environment["PATH"] = shims + os.pathsep + environment["PATH"]
        environment["FAKE_STROBE"] = os.path.abspath(sys.argv[2])
        environment["FAKE_LENS"] = os.path.abspath(sys.argv[3])
        environment.update(INSTRUCTIONS="off", BUDGET="20s", SUITE_ARGUMENTS="--filter 'capture frame'")
    else:
        real_fixture(fixture)
        if not run_installs:
            # Installing is this machine's business (scripts/setup.sh); the
            # step's packages must be there.
            with open(os.path.join(shims, "apt-get"), "w") as file:
                file.write(APT_SHIM)
            os.chmod(os.path.join(shims, "apt-get"), 0o755)
            environment["PATH"] = shims + os.pathsep + environment["PATH"]
    base = subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=fixture, check=True, capture_output=True,
                          text=True).stdout.strip()
    values = {"github.event.pull_request.base.sha": base, "runner.os": "Linux"}
    shell = job.get("defaults", {}).get("run", {}).get("shell", "bash")
    if shell != "bash":
        sys.exit(f"run-workflow: the job's shell is {shell}; this script plays bash")
    timings = []
    for number, step in enumerate(job["steps"], 1):
        name = step.get("name", f"step {number}")
        uses = step.get("uses", "")
        start = time.monotonic()
        if uses.startswith("actions/checkout@"):
            subprocess.run(["git", "clone", "-q", fixture, workspace], check=True)
            timings.append((name, "cloned the fixture", time.monotonic() - start))
            continue
        if uses.startswith("actions/github-script@"):
            report = os.path.join(workspace, "report.md")
            if not os.path.isfile(report) or os.path.getsize(report) == 0:
                sys.exit(f"run-workflow: {name}: no report.md to post")
            timings.append((name, "report.md to post: %d bytes" % os.path.getsize(report), 0.0))
            continue
        if uses:
            timings.append((name, "skipped (" + uses + ")", 0.0))
            continue
        step_environment = dict(environment)
        for key, value in step.get("env", {}).items():
            step_environment[key] = expressions(str(value), values)
        output = os.path.join(work, f"output-{number}")
        open(output, "w").close()
        step_environment["GITHUB_OUTPUT"] = output
        step_environment["GITHUB_WORKSPACE"] = workspace
        script = os.path.join(work, f"step-{number}.sh")
        with open(script, "w") as file:
            file.write(expressions(step["run"], values))
        print(f"run-workflow: {name}", flush=True)
        status = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], cwd=workspace,
                                env=step_environment).returncode
        seconds = time.monotonic() - start
        with open(output) as file:
            for line in file:
                if "=" in line and step.get("id"):
                    key, value = line.rstrip("\n").split("=", 1)
                    values[f"steps.{step['id']}.outputs.{key}"] = value
        expected = 0
        if name == "Gate":
            # --real: the regression must be found. --fast: the debug suite
            # and a short budget decide nothing for sure; the Gate must act
            # on the status Compare recorded.
            recorded = values.get("steps.compare.outputs.status", "")
            if recorded not in ("0", "1"):
                sys.exit(f"run-workflow: Compare recorded status {recorded!r}; see {workspace}/compare.log")
            expected = int(recorded) if fast else 1
        timings.append((name, f"exit status {status}", seconds))
        if status != expected:
            sys.exit(f"run-workflow: {name}: exit status {status}, expected {expected}")
    log = os.path.join(workspace, "compare.log")
    counted = [line for line in open(log) if line.startswith("instructions:")] if os.path.exists(log) else []
    for name, what, seconds in timings:
        print(f"run-workflow: {seconds:6.1f} s  {name}: {what}")
    for line in counted:
        print("run-workflow: compare.log: " + line.rstrip())
    print("run-workflow: every step ran as it should; the gate's exit status: "
          + values["steps.compare.outputs.status"])
    if fast:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
