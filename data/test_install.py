"""meson install --destdir into a scratch directory: the desktop entry, the
icon, the MIME type, the man pages and the launcher's bash completion are
installed and valid (desktop-file-validate, update-mime-database, bash -n,
man's own reader when there), and threadmon --version, threadmon-display
--version and the version a capture records agree. Skips (77) what this
machine lacks, saying which package."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ.get("THREADMON_BUILD_ROOT", os.getcwd())
failures = []


def check(cond, what):
    print(f"  {'ok  ' if cond else 'FAIL'} {what}")
    if not cond:
        failures.append(what)
    return cond


def run(*argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


def main():
    dest = tempfile.mkdtemp(prefix="threadmon-install-")
    try:
        inst = run("meson", "install", "--no-rebuild", "-C", BUILD, "--destdir", dest)
        if inst.returncode != 0:
            print(f"SKIP meson install failed (is everything built?): {inst.stderr.strip()[-300:]}")
            return 77
        prefix = run("meson", "introspect", "--buildoptions", BUILD)
        opts = {o["name"]: o["value"] for o in json.loads(prefix.stdout)}
        root = dest + opts["prefix"]
        share = os.path.join(root, opts["datadir"])
        desktop = os.path.join(share, "applications", "threadmon-display.desktop")
        icon = os.path.join(share, "icons", "hicolor", "scalable", "apps", "threadmon.svg")
        mime = os.path.join(share, "mime", "packages", "threadmon.xml")
        completion = os.path.join(share, "bash-completion", "completions", "threadmon")
        for path in (desktop, icon, mime, completion):
            check(os.path.isfile(path), f"installed {os.path.relpath(path, dest)}")
        if shutil.which("desktop-file-validate"):
            v = run("desktop-file-validate", desktop)
            check(v.returncode == 0 and not v.stdout.strip(),
                  f"desktop-file-validate: {v.stdout.strip() or 'clean'}")
        else:
            print("  skip desktop-file-validate: not installed (desktop-file-utils)")
        if shutil.which("update-mime-database"):
            v = run("update-mime-database", "-V", os.path.join(share, "mime"))
            check(v.returncode == 0 and "error" not in v.stderr.lower(),
                  f"update-mime-database reads the type: {v.stderr.strip()[-200:]}")
            globs = os.path.join(share, "mime", "globs2")
            check(os.path.exists(globs) and "*.tmcap" in open(globs).read(),
                  "*.tmcap is application/x-threadmon-capture")
        check(run("bash", "-n", completion).returncode == 0, "the bash completion parses")
        check(" export " in " " + open(completion).read().split("commands=")[1].split('"')[1] + " ",
              "the completion knows export")
        man = os.path.join(root, opts["mandir"], "man1")
        if shutil.which("help2man"):
            for tool in ("threadmon", "threadmon-display", "threadmon-attach"):
                page = os.path.join(man, tool + ".1")
                ok = check(os.path.isfile(page), f"man page {tool}.1")
                if ok:
                    text = open(page).read()
                    check(".TH " in text and "\\-" in text and "help2man" in text,
                          f"{tool}.1 is a man page made from its --help")
            if shutil.which("man"):
                v = run("man", "-l", os.path.join(man, "threadmon.1"), env={**os.environ, "MANPAGER": "cat"})
                check(v.returncode == 0 and "export" in v.stdout, "man -l threadmon.1 shows export")
        else:
            print("  skip man pages: help2man not installed")
        # Versions: the launcher, the display and a capture's Hello.
        bindir = os.path.join(root, opts["bindir"])
        launcher = run(sys.executable, os.path.join(BUILD, "scripts", "threadmon"), "--version")
        lv = launcher.stdout.split()[-1] if launcher.stdout.split() else ""
        display_bin = os.path.join(BUILD, "display", "threadmon-display")
        if os.path.exists(display_bin):
            display = run(display_bin, "--version", env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
            dv = display.stdout.split()[-1] if display.stdout.split() else ""
            check(lv and lv == dv, f"threadmon --version {lv!r} == threadmon-display --version {dv!r}")
        else:
            print("  skip threadmon-display --version: the display is not built")
        diff_bin = os.path.join(BUILD, "display", "export", "threadmon-diff")
        if not os.path.exists(diff_bin):
            print("  skip the capture's version: threadmon-diff is not built")
            return 1 if failures else 0
        check(os.path.exists(os.path.join(bindir, "threadmon-export")), "threadmon-export installed")
        cap = os.path.join(dest, "v.tmcap")
        rec = run(sys.executable, os.path.join(BUILD, "scripts", "threadmon"), "record", "-o", cap,
                  "--", os.path.join(BUILD, "tests", "workloads", "mutex_hold"), "--rounds", "2")
        if rec.returncode == 0:
            d = run(os.path.join(BUILD, "display", "export", "threadmon-diff"), "--json", cap, cap)
            cv = json.loads(d.stdout)["before"].get("version") if d.returncode == 0 else None
            check(cv == lv, f"the capture records version {cv!r}, the tools say {lv!r}")
        else:
            check(False, f"threadmon record failed: {rec.stderr.strip()[-200:]}")
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    return 1 if failures else 0


sys.exit(main())
