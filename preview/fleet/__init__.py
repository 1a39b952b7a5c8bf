"""A fleet manager's preview: its workers previewed from their stack files (``resolve.py``), and the Fleet section
(``summary.py``)."""
