"""Where a rating-scale collection stands, and what more raters would buy.

A long table of ratings (item, annotator, score; optional seconds, is_random) in, small result
dataclasses out: the reliability of the item means now (split-half, Spearman–Brown corrected) and
Krippendorff's α with bootstrap intervals over items (:mod:`.reliability`); each item's mean with a
t-interval; per annotator the leave-one-out agreement, the crowd-sts filters and re-test
consistency (:mod:`.annotators`); the projection to K raters per item by Spearman–Brown and by
resampling the collection's own raters, and the raters needed for a target (:mod:`.projection`);
where the next raters help most (:mod:`.next_batch`). :func:`.plan.plan_ratings` runs them all
for ``semrel ratings plan``.
"""
