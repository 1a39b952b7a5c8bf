"""The real-vs-simulated comparison as the Markdown table the what-if validation page shows
(``docs/contributing/whatif-validation.md``): one row per job, or the wide form for large scenarios."""

from __future__ import annotations

from tests.support.whatif.compare import FINE_ORDER_GAP_S, Comparison


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def markdown(c: Comparison) -> str:
    pairs, bad = c.order_pairs()
    if c.scenario.wide:
        return _wide_markdown(c)
    lines = [
        f"**{c.scenario.name}**: {c.scenario.what}. Start order real `{c.order('real')}`, simulated "
        f"`{c.order('sim')}`: **{'same' if c.same_order else 'DIFFERENT'}** ({pairs - len(bad)}/{pairs} pairs "
        f"agree{'; not: ' + ', '.join(bad) if bad else ''}); starts within the allowed lag: "
        f"**{c.within_tolerance}/{len(c.rows)}**, max |Δ| {c.max_abs_delta_s:.2f} s.",
        "",
        "| job | submit s | real start s | sim start s | Δ s | allowed ±s | real nodes | sim nodes | "
        "preempted real/sim | restart real (eligible) / sim s |",
        "|---|---:|---:|---:|---:|---:|---|---|---|---|",
    ]
    if c.scenario.boot_s is not None:
        problems = c.power_problems()
        lines[0] += (
            f" Power saving: real {[(round(t, 1), k, n) for t, k, n in c.power_real]}, simulated "
            f"{[(round(t, 1), k, n) for t, k, n in c.power_sim]}: "
            f"**{'agree' if not problems else 'DIFFER: ' + '; '.join(problems)}**."
        )
    for r in c.rows:
        restart = (
            "—"
            if r.real_restart_s is None and r.sim_restart_s is None
            else f"{_f(r.real_restart_s)} / {_f(r.sim_restart_s)}"
        )
        lines.append(
            f"| {r.job} | {r.submit_s:.2f} | {_f(r.real_start_s)} | {_f(r.sim_start_s)} | {_f(r.delta_s)} | "
            f"{c.allowed_s(r):.0f} | {r.real_nodes} | {r.sim_nodes} | {r.real_preempted}/{r.sim_preempted} | "
            f"{restart} |"
        )
    return "\n".join(lines)


def _wide_markdown(c: Comparison) -> str:
    pairs, bad = c.wide_order(c.tolerance_s)
    fine, fine_bad = c.wide_order(FINE_ORDER_GAP_S)
    (ru, rw), (su, sw) = c.aggregates("real"), c.aggregates("sim")
    late = c.wide_late
    lines = [
        f"**{c.scenario.name}**: {c.scenario.what}. Order of pairs more than {c.tolerance_s:g} s apart: "
        f"**{pairs - len(bad)}/{pairs}** agree{'; not: ' + ', '.join(bad) if bad else ''} (more than "
        f"{FINE_ORDER_GAP_S:g} s apart: {fine - len(fine_bad)}/{fine}{'; not: ' + ', '.join(fine_bad) if fine_bad else ''}); "
        f"starts within the allowed lag: **{len(c.rows) - len(late)}/{len(c.rows)}**, max |Δ| "
        f"{c.max_abs_delta_s:.2f} s; utilization real {ru:.1%} / sim {su:.1%} (Δ {100 * (su - ru):+.1f} pts); "
        f"mean wait real {rw:.2f} s / sim {sw:.2f} s (Δ {sw - rw:+.2f} s, {(sw - rw) / rw:+.1%}): "
        f"**{'agrees' if c.agrees else 'DIFFERS'}**.",
        "",
        "| job | partition | nodes | submit s | real start s | sim start s | Δ s | allowed ±s | real nodes | "
        "sim nodes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    jobs = {j.id: j for j in c.scenario.jobs}
    for r in sorted(c.rows, key=lambda r: (r.sim_start_s is None, r.sim_start_s or 0.0)):
        j = jobs[r.job]
        lines.append(
            f"| {r.job} | {j.pool} | {j.nodes} | {r.submit_s:.2f} | {_f(r.real_start_s)} | "
            f"{_f(r.sim_start_s)} | {_f(r.delta_s)} | {c.wide_allowed_s(r):.0f} | {r.real_nodes} | "
            f"{r.sim_nodes} |"
        )
    return "\n".join(lines)
