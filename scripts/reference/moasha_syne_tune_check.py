#!/usr/bin/env python3
"""What Syne Tune 0.16.0's MOASHA decides for a trial that dominates every recorded result of its
rung, and for one that every recorded result dominates (requirements-synetune.txt pins it).

    /path/to/venv/bin/python scripts/reference/moasha_syne_tune_check.py

MOASHA's Bracket (syne_tune/optimizer/schedulers/asha.py, `on_result`) calls the priority,
`NonDominatedPriority`, which returns `nondominated_sort(X)`: the rows' indices in sorted order.
The Bracket reads that list as one priority per row and ranks the new trial (the last row) by the
value at the last position, the index of the row sorted last, not by where the new trial sorts.
Prints, for each new trial, the sorted indices, the rank the Bracket computes, and its decision.
"""

import numpy as np
import syne_tune
from syne_tune.optimizer.schedulers.asha import Bracket
from syne_tune.optimizer.schedulers.multiobjective.multiobjective_priority import (
    NonDominatedPriority,
)

RECORDED = [[0.5, 0.5], [0.6, 0.4], [0.4, 0.6], [0.9, 0.9], [0.8, 0.95]]


def main():
    print(f"syne-tune {syne_tune.__version__}; recorded results at rung 1 (minimised): {RECORDED}")
    for new, what in (([0.1, 0.1], "dominates every recorded result"),
                      ([2.0, 2.0], "is dominated by every recorded result")):
        priority = NonDominatedPriority()
        order = [int(i) for i in priority(np.array(RECORDED + [new]))]
        bracket = Bracket(min_t=1, max_t=9, reduction_factor=3, s=0, priority=priority)
        for i, r in enumerate(RECORDED):
            bracket.on_result(trial_id=i, cur_iter=1, metrics={"a": r[0], "b": r[1]})
        rank = order[-1] / len(order)
        decision = bracket.on_result(trial_id=99, cur_iter=1, metrics={"a": new[0], "b": new[1]})
        print(f"new trial {new} ({what}): sorted position {order.index(len(RECORDED))} of "
              f"{len(order)}; the Bracket's rank {rank:.3f} (stop above 1/3): {decision}")


if __name__ == "__main__":
    main()
