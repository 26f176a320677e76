"""What machine the numbers were taken on."""
import os
import platform
import subprocess


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def glibc_version():
    try:
        out = subprocess.run(["ldd", "--version"], capture_output=True, text=True).stdout
        return out.splitlines()[0].split()[-1]
    except (OSError, IndexError):
        return "-".join(platform.libc_ver())


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def describe():
    return {
        "CPU": cpu_model(),
        "cores": str(os.cpu_count()),
        "kernel": platform.release(),
        "glibc": glibc_version(),
        "load average at start": load_average(),
    }
