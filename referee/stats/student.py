"""Student's t quantiles from ``scipy.special`` (what ``scipy.stats.t.ppf`` computes, to
the bit): importing ``scipy.stats`` costs over a second on every ``referee leaderboard``,
and ``scipy.special`` itself ~0.1 s, so it is imported at the first quantile (the
commands that publish nothing never pay it)."""

from __future__ import annotations

from typing import Any


class _StudentT:
    """The one method of ``scipy.stats.t`` the verdicts use."""

    @staticmethod
    def ppf(q: Any, df: Any) -> Any:
        """The ``q`` quantile of Student's t with ``df`` degrees of freedom."""
        from scipy.special import stdtrit

        return stdtrit(df, q)


student_t = _StudentT()
