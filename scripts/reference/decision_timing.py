"""The timed part shared by dpl_timing.py and dyhpo_timing.py: one decision of a reference
surrogate, `observe` of the newest unit then `suggest`, from a saved state, the median of
`repeats` repetitions of process CPU time for each part. Prints `refine_s=... predict_s=...`."""

import copy
import time


def time_decision(saved, observe, suggest, repeats):
    refine, predict = [], []
    for _ in range(repeats):
        r = copy.deepcopy(saved)
        t0 = time.process_time()
        observe(r)
        t1 = time.process_time()
        suggest(r)
        t2 = time.process_time()
        refine.append(t1 - t0)
        predict.append(t2 - t1)
    print(f"refine_s={sorted(refine)[len(refine) // 2]} predict_s={sorted(predict)[len(predict) // 2]}")
