"""Small helpers with no project imports above them: atomic file writes, number formatting, dtypes,
JSON-safe values, a step timer and the package's resource folders (kernels/, templates/).
"""
