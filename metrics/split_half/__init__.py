"""Split-half reliability of BWS annotations and of ratings (trials, halves, trial-wise correlations)."""
