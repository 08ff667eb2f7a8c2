"""The report's layout: the page model and its cells, charts, tables, the HTML page and the Markdown
summary, from the results of :mod:`profiler_report.analysis` (``render`` is :mod:`.build`).
"""
