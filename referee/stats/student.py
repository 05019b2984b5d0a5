"""Student's t quantiles from ``scipy.special`` (what ``scipy.stats.t.ppf`` computes, to
the bit): importing ``scipy.stats`` costs over a second on every ``referee leaderboard``."""

from __future__ import annotations

from typing import Any

from scipy.special import stdtrit


class _StudentT:
    """The one method of ``scipy.stats.t`` the verdicts use."""

    @staticmethod
    def ppf(q: Any, df: Any) -> Any:
        """The ``q`` quantile of Student's t with ``df`` degrees of freedom."""
        return stdtrit(df, q)


student_t = _StudentT()
