"""Packages by pattern, so that a new case needs no line here: the code under profiler_report/
(its cases among it), and the data folders kernels/ and templates/ (a folder per case), shipped
inside the package. Everything else (metadata, package-dir, package-data globs) is in pyproject.toml.
"""

from setuptools import find_namespace_packages, find_packages, setup

DATA = [f"profiler_report.{p}" for p in find_namespace_packages(include=["kernels", "kernels.*", "templates",
                                                                         "templates.*"])]
setup(packages=[*find_packages(include=["profiler_report", "profiler_report.*"]), *DATA])
