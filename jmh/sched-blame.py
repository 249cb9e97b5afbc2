#!/usr/bin/env python3
"""Who kept one thread off its CPU: reads `perf script -F cpu,time,event,trace` of a `perf sched record` from stdin.

Usage: perf script -i FILE -F cpu,time,event,trace | jmh/sched-blame.py TID

Prints the thread's run time, the time it waited runnable and how often it was preempted, its sleeps by state, and
the tasks that ran on its CPU while it waited runnable (after preempting it, or while it had just been woken), with
the time and the number of preemptions charged to each.
"""
import collections
import re
import sys

SWITCH = re.compile(r'\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:\s+prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ '
                    r'prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)')
WAKEUP = re.compile(r'\[(\d+)\]\s+([\d.]+):\s+sched:sched_wakeup:\s+comm=(.*?) pid=(\d+) prio=\d+ target_cpu=(\d+)')


def main(tid):
    running = {}  # cpu -> comm running there
    state, since, charge = None, None, None  # charge: (cpu, comm, since) while the thread waits runnable
    run = waited = 0.0
    preempted = 0
    slept, sleeps = collections.Counter(), collections.Counter()
    blamed, preemptions = collections.Counter(), collections.Counter()
    first = last = None
    for line in sys.stdin:
        m = SWITCH.search(line)
        if m:
            cpu, ts, _, prev, prev_state, next_comm, nxt = m.groups()
            ts = float(ts)
            first = ts if first is None else first
            last = ts
            if state == 'waiting' and charge and charge[0] == cpu:
                blamed[charge[1]] += ts - charge[2]
                charge = (cpu, next_comm, ts)
            if prev == tid:
                run += ts - since if since is not None else 0
                since = ts
                if prev_state.startswith('R'):
                    state, charge = 'waiting', (cpu, next_comm, ts)
                    preempted += 1
                    preemptions[next_comm] += 1
                else:
                    state, charge = 'sleep ' + prev_state, None
            elif nxt == tid:
                if state == 'waiting':
                    waited += ts - since
                elif state and state.startswith('sleep'):
                    slept[state] += ts - since
                    sleeps[state] += 1
                state, since, charge = 'running', ts, None
            running[cpu] = next_comm
            continue
        m = WAKEUP.search(line)
        if m and m.group(4) == tid and state and state.startswith('sleep'):
            ts = float(m.group(2))
            slept[state] += ts - since
            sleeps[state] += 1
            state, since = 'waiting', ts
            target = m.group(5)
            charge = (target, running.get(target, '?'), ts)
    if first is None:
        sys.exit("no sched_switch events in the input")
    print(f"span {last - first:.2f} s: thread {tid} ran {run:.2f} s, waited runnable {waited:.3f} s, "
          f"preempted {preempted} times")
    print("sleeps: " + ", ".join(f"{k}: {v:.3f} s in {sleeps[k]}" for k, v in slept.items()))
    print("waiting runnable, charged to (seconds, preemptions):")
    for comm, seconds in blamed.most_common(15):
        print(f"  {comm:24s} {seconds:.3f} {preemptions[comm]}")


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
