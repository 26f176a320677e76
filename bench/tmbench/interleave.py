"""Repeated, interleaved measurement: every round runs each tool once, in an
order rotated per round, so machine drift (other builds, frequency changes)
hits all tools alike. Results are medians."""
import statistics

from . import procrun


def measure(tools, rounds, measure_one, reps_for=None, log=print):
    """measure_one(tool) -> float. Returns {tool.key: (median, [values], error)}.

    reps_for(tool) caps the rounds of slow tools (valgrind)."""
    values = {t.key: [] for t in tools}
    errors = {}
    for r in range(rounds):
        order = tools[r % len(tools):] + tools[:r % len(tools)]
        for tool in order:
            if tool.key in errors:
                continue
            if reps_for and len(values[tool.key]) >= reps_for(tool):
                continue
            try:
                values[tool.key].append(measure_one(tool))
            except procrun.RunError as e:
                errors[tool.key] = str(e)
                log(f"  {tool.label}: {e}")
    out = {}
    for t in tools:
        v = values[t.key]
        out[t.key] = (statistics.median(v) if v else None, v, errors.get(t.key))
    return out
