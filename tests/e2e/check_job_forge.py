#!/usr/bin/env python3
"""What a job's owner can do to the node side of `numaguard check --job J`
(tests/e2e/t-check-wide.sh, issue 38): run as the owner in a step of job J
on a node, wait for that node's `numaguard check --job J --local` (Slurm
runs it as the owner), stop it before it prints, write FILE to its stdout
(/proc/PID/fd/1, open to its owner) and make it exit 0 (gdb: _exit(0)).
Root's check then reads FILE as the node's answer.

    check_job_forge.py JOB NODE FILE SECONDS
prints "ready", then "forged PID" per node side it forged: the owner's
processes running that command with SLURMD_NODENAME=NODE (the test
cluster's slurmd share one host: each step says its node).
"""
import os
import signal
import subprocess
import sys
import time

def is_node_side(pid, job, node):
    try:
        if os.stat("/proc/%d" % pid).st_uid != os.getuid():
            return False
        argv = open("/proc/%d/cmdline" % pid, "rb").read().split(b"\0")
        env = open("/proc/%d/environ" % pid, "rb").read().split(b"\0")
    except OSError:
        return False
    return (b"check" in argv and b"--local" in argv and b"--job" in argv and job in argv and
            b"SLURMD_NODENAME=" + node in env)

def forge(pid, data):
    os.kill(pid, signal.SIGSTOP)
    fd = os.open("/proc/%d/fd/1" % pid, os.O_WRONLY)
    os.write(fd, data)
    os.close(fd)
    subprocess.run(["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off", "-p", str(pid),
                    "-ex", "call (void)_exit(0)"],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)
    # The pending SIGSTOP interrupts gdb's call inside _exit: the process
    # stays stopped there until continued, then exits 0.
    os.kill(pid, signal.SIGCONT)

def main():
    job, node = sys.argv[1].encode(), sys.argv[2].encode()
    data = open(sys.argv[3], "rb").read()
    end = time.time() + float(sys.argv[4])
    seen = set()
    print("ready", flush=True)
    while time.time() < end:
        for d in os.listdir("/proc"):
            if d.isdigit() and int(d) not in seen and is_node_side(int(d), job, node):
                seen.add(int(d))
                try:
                    t0 = time.time()
                    forge(int(d), data)
                    print("forged %s in %.1f s" % (d, time.time() - t0), flush=True)
                except (OSError, subprocess.SubprocessError) as e:
                    print("missed", d, e, flush=True)
        time.sleep(0.001)

main()
