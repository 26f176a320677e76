"""Running one benchmark process and reading what it printed."""
import json
import os
import subprocess
import time


class RunError(RuntimeError):
    pass


def run(argv, env=None, timeout=300, cwd=None, stdout_path=None, merge_stderr=False):
    """Runs argv; returns (stdout text, wall seconds). Raises RunError.

    merge_stderr: stderr is returned after stdout (stress-ng reports there)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    t0 = time.monotonic()
    try:
        if stdout_path:
            with open(stdout_path, "wb") as out:
                p = subprocess.run(argv, env=full_env, cwd=cwd, stdout=out,
                                   stderr=subprocess.PIPE, timeout=timeout)
            text = ""
        else:
            p = subprocess.run(argv, env=full_env, cwd=cwd, capture_output=True,
                               timeout=timeout)
            text = p.stdout.decode(errors="replace")
            if merge_stderr:
                text += p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        raise RunError(f"timed out after {timeout} s: {' '.join(argv)}")
    wall = time.monotonic() - t0
    if p.returncode != 0:
        err = p.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise RunError(f"exit {p.returncode}: {' '.join(argv)}: {' / '.join(err)}")
    return text, wall


def last_json(text):
    """The last line of text that parses as a JSON object."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    raise RunError(f"no JSON result in output: {text[-200:]!r}")


def dir_bytes(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total
