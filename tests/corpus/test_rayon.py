"""A rayon program (tests/corpus/rs_rayon): a pool of named workers whose
items take turns at one std::sync::Mutex, idle between rounds in rayon's own
sleep. The Mutex is found and named, with the workers that waited for it;
rayon's idle waits and the main thread's wait for the pool raise nothing.
Built offline with cargo from Debian's crates (librust-rayon-dev), cached in
the build directory."""
import glob
import os
import shutil
import subprocess

import corpus
import tmtest
from corpus import check

WORKERS, MILLIS = 3, 1500
REGISTRY = "/usr/share/cargo/registry"


def build():
    cargo = corpus.tool("cargo", os.path.expanduser("~/.cargo/bin"))
    if not glob.glob(os.path.join(REGISTRY, "rayon-[0-9]*")):
        raise tmtest.Skip(f"no rayon crate in {REGISTRY} (Debian's librust-rayon-dev)")
    crate = os.path.join(corpus.CORPUS_BUILD, "rs_rayon")
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    os.makedirs(os.path.join(crate, ".cargo"), exist_ok=True)
    for name in ("Cargo.toml", os.path.join("src", "main.rs")):
        shutil.copyfile(corpus.source(os.path.join("rs_rayon", name)), os.path.join(crate, name))
    # Debian's crates in place of crates.io: no network.
    with open(os.path.join(crate, ".cargo", "config.toml"), "w") as f:
        f.write(f'[source.crates-io]\nreplace-with = "debian"\n'
                f'[source.debian]\ndirectory = "{REGISTRY}"\n[net]\noffline = true\n')
    env = dict(os.environ, CARGO_HOME=os.path.join(crate, ".cargo-home"))
    built = subprocess.run([cargo, "build", "--release", "--offline", "--quiet"], cwd=crate, env=env,
                           capture_output=True, text=True, timeout=900)
    if built.returncode:
        raise tmtest.Failed(f"cargo build failed: {built.stderr.strip()[-2000:]}")
    return os.path.join(crate, "target", "release", "rs_rayon")


def test_rayon():
    exe = build()
    run = corpus.Run("rayon", [exe, str(WORKERS), str(MILLIS)])
    check(run.run.returncode == 0 and run.truth.get("rounds", 0) > 0,
          f"exit {run.run.returncode}, truth {run.truth}")
    workers = {t["tid"]: t["name"] for t in run.threads("rayon-")}
    check(sorted(workers.values()) == [f"rayon-{i}" for i in range(WORKERS)],
          f"worker names {sorted(workers.values())}")

    def the_mutex(f):  # the items' shared Mutex: the workers do take turns at it
        text = str(f.get("evidence", {}).get("runtime", "")) + str(f.get("message", ""))
        return f.get("kind") == "serialising_object" and "Mutex" in text and \
            set(f.get("threads", [])) <= set(workers)
    found = [f for f in run.findings() if the_mutex(f)]
    check(len(found) == 1, f"no finding names the workers' Mutex: {tmtest.describe(run.findings())}")
    for f in found:
        check(len(f.get("threads", [])) >= 2, f"the Mutex's finding names {f.get('threads')}")
    corpus.no_false_alarm(run, the_mutex)
    # The item closure's lock, inlined into rayon's code: its own line.
    mutexes = [o for o in run.report["sync_objects"] if o.get("runtime") == "Rust std::sync::Mutex"]
    frames = [f for o in mutexes for s in o.get("call_sites", []) for f in s.get("frames", [])]
    check(any(f.endswith(" in main.rs:36)") for f in frames),
          f"no frame of the Mutex's call sites names main.rs:36: {frames[:6]}")


tmtest.main(globals())
