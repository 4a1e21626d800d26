from metrics.correlation import correlate
