"""CPython threads: three compute in pure Python (they take turns at the
GIL), three take turns at a threading.Lock held across a 2 ms sleep. Prints
its truth (the native thread ids of each group) as one JSON line."""
import json
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
lock = threading.Lock()
turns = 0
tids = {"cpu": [], "lock": []}


def cpu():
    tids["cpu"].append(threading.get_native_id())
    end, x = time.monotonic() + SECONDS, 0
    while time.monotonic() < end:
        for i in range(2000):
            x += i * i


def locker():
    global turns
    tids["lock"].append(threading.get_native_id())
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        with lock:
            turns += 1
            time.sleep(0.002)


threads = [threading.Thread(target=cpu, name=f"py-cpu-{i}") for i in range(3)]
threads += [threading.Thread(target=locker, name=f"py-lock-{i}") for i in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
gil = getattr(sys, "_is_gil_enabled", lambda: True)()
print(json.dumps({"cpu_tids": tids["cpu"], "lock_tids": tids["lock"], "lock_turns": turns,
                  "gil": gil, "version": sys.version.split()[0]}))
