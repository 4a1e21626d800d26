from metrics.errors import DataValidationError
