"""The machine the report ran on, for the report's header."""
import os
import platform
import re
import subprocess


def machine(results):
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    compiler = "unknown compiler"
    try:
        with open(os.path.join(results, "..", "CMakeCache.txt")) as f:
            m = re.search(r"CMAKE_CXX_COMPILER:\w+=(.*)", f.read())
        if m:
            compiler = subprocess.run([m.group(1), "--version"], capture_output=True,
                                      text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        pass
    os_name = platform.platform()
    try:
        with open("/etc/os-release") as f:
            m = re.search(r'PRETTY_NAME="([^"]*)"', f.read())
            if m:
                os_name = f"{m.group(1)}, Linux {platform.release()}"
    except OSError:
        pass
    thp = ""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = f.read().strip()
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "os": os_name, "compiler": compiler, "thp": thp}
