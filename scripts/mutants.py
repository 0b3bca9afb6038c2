#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""make mutants: apply each security-relevant mutant (Sources/*/mutants.txt), one at a
time, to a scratch copy of the tree, build, run the tests named for it, and print a table.
Fails if any mutant survives, or if a mutant no longer applies (its line changed: update
the list next to the code). Scratch copy and build folder: .build-mutants/."""
import os, re, shutil, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRATCH = os.path.join(ROOT, ".build-mutants")
TREE = os.path.join(SCRATCH, "tree")
BUILD = os.path.join(SCRATCH, "build")


def mutants():
    out = []
    for target in sorted(os.listdir(os.path.join(ROOT, "Sources"))):
        path = os.path.join(ROOT, "Sources", target, "mutants.txt")
        if not os.path.exists(path):
            continue
        current = None
        for line in open(path, encoding="utf-8").read().split("\n"):
            if line.startswith("== "):
                name, _, tests = line[3:].partition(" | ")
                current = {"name": name.strip(), "tests": tests.strip(), "target": target}
                out.append(current)
            elif current is None or line.startswith("#") or not line.strip():
                continue
            elif line.startswith("file: "):
                current["file"] = os.path.join("Sources", target, line[6:].strip())
            elif line.startswith("- "):
                current["old"] = line[2:]
            elif line.startswith("+ "):
                current["new"] = line[2:]
    return out


def run(cmd, **kw):
    # The tests must run the mutant's own build, never a release build named by make test.
    env = {k: v for k, v in os.environ.items() if k != "NU11VLT_TEST_BIN_DIR"}
    return subprocess.run(cmd, cwd=TREE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, **kw)


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else None
    os.makedirs(SCRATCH, exist_ok=True)
    if os.path.exists(TREE):
        shutil.rmtree(TREE)
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, stdout=subprocess.PIPE, text=True).stdout.split()
    for f in files:
        dst = os.path.join(TREE, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), dst)
    build = ["swift", "build", "--build-tests", "--scratch-path", BUILD]
    print("building the scratch copy…", flush=True)
    r = run(build)
    if r.returncode != 0:
        print(r.stdout[-3000:])
        sys.exit("the unmutated tree does not build")
    rows, survived, stale = [], 0, 0
    for m in mutants():
        if only and not re.search(only, m["name"]):
            continue
        path = os.path.join(TREE, m["file"])
        text = open(path, encoding="utf-8").read()
        lines = text.split("\n")
        hits = [i for i, l in enumerate(lines) if l == m["old"]]
        if len(hits) != 1:
            rows.append((m["name"], "STALE", f"line found {len(hits)} times in {m['file']}", 0))
            stale += 1
            print(f"  STALE     {m['name']}", flush=True)
            continue
        lines[hits[0]] = m["new"]
        start = time.time()
        try:
            open(path, "w", encoding="utf-8").write("\n".join(lines))
            b = run(build)
            if b.returncode != 0:
                rows.append((m["name"], "STALE", "does not compile", time.time() - start))
                stale += 1
                print(f"  STALE     {m['name']} (does not compile)", flush=True)
                continue
            t = run(["swift", "test", "--skip-build", "--scratch-path", BUILD, "--filter", m["tests"]])
            failed = re.findall(r'✘ Test "([^"]+)"[^\n]*failed', t.stdout)
            ran = re.search(r"Test run with (\d+) tests?", t.stdout)
            crashed = re.search(r"Exited with unexpected signal code (\d+)|Fatal error|unexpected signal", t.stdout)
            if t.returncode != 0 and crashed:
                rows.append((m["name"], "killed", "the tests crashed: " + crashed.group(0), time.time() - start))
            elif t.returncode != 0 and ran:
                rows.append((m["name"], "killed", "; ".join(sorted(set(failed)))[:90] or "(suite failed)", time.time() - start))
            elif not ran:
                rows.append((m["name"], "STALE", "no test ran for filter " + m["tests"], time.time() - start))
                stale += 1
            else:
                rows.append((m["name"], "SURVIVED", m["tests"], time.time() - start))
                survived += 1
        finally:
            open(path, "w", encoding="utf-8").write(text)
        print(f"  {rows[-1][1]:8}  {m['name']}", flush=True)
    print()
    print("| mutant | result | killed by | s |")
    print("|---|---|---|---|")
    for name, result, by, secs in rows:
        print(f"| {name} | {result} | {by} | {secs:.0f} |")
    print(f"\n{len(rows)} mutants: {len(rows) - survived - stale} killed, {survived} survived, {stale} stale")
    sys.exit(1 if survived or stale else 0)


if __name__ == "__main__":
    main()
