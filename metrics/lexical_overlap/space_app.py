from metrics.space_app import launch
