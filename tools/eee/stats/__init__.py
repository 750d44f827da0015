"""Statistics as pure functions: what every number the store shows is estimated with.

No module here imports anything of ``eee``; each function takes numbers (or numpy arrays)
and returns numbers, so each can be checked by hand and against ``scipy.stats`` (the tests
do; scipy is not a dependency of the tools):

- :mod:`eee.stats.distributions`: the normal and Student t distributions (cdf, quantile,
  two-sided p-values, vectorised), from the regularised incomplete beta function;
- :mod:`eee.stats.intervals`: the uncertainty of one score from its items: repeated samples
  averaged within an item, Wilson for a proportion of binary items (with an effective sample
  size under clustering), t for a continuous score (cluster-robust when items are
  clustered), the percentile bootstrap (resampling clusters when there are clusters);
- :mod:`eee.stats.paired`: two results on the same items: the paired differences, the
  paired (cluster) bootstrap and t interval, the exact McNemar test, the non-inferiority
  verdict against a margin;
- :mod:`eee.stats.ranking`: Holm's step-down correction and rank ranges from every pair of
  results of one leaderboard, computed in blocks (memory does not grow with the square of
  the number of results);
- :mod:`eee.stats.passk`: the unbiased pass@k of one item from n samples with c correct,
  averaged over items.
"""
