"""``python -m preview job-objects``: the objects one TrainJob applies to get its own NVLink domain."""
