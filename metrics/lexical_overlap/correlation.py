from metrics.correlation import CorrelationResult, correlate
