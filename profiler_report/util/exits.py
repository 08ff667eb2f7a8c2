"""The console entry's last word: an exception turned into one line on stderr and an exit code
(the codes of :mod:`profiler_report.errors`), so that no traceback reaches a user without ``--debug``.
"""

from __future__ import annotations

import sys
import traceback
from typing import NoReturn

import click

from profiler_report.errors import ProfilerReportError


def run_main(main: click.Group) -> NoReturn:
    """Run the command group ``main`` as the console script does: every error the tool knows is
    one stderr line with its fix and its exit code; a click usage error exits 2, an interrupt 130,
    an OSError (an output path that cannot be written) 2, any other exception 70 (a bug; never 1,
    which means findings). ``--debug`` among the arguments prints the traceback first."""
    debug = "--debug" in sys.argv[1:]
    try:
        main.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except click.exceptions.Abort:  # click's form of KeyboardInterrupt
        click.echo("interrupted: earlier reports are untouched", err=True)
        sys.exit(130)
    except ProfilerReportError as exc:
        if debug:
            traceback.print_exc()
        click.echo(exc.one_line(), err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:  # an output path that is a file, a read-only folder, a full disk...
        if debug:
            traceback.print_exc()
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        click.echo(f"error: {exc.strerror or exc}{where} (fix: check the path and its permissions)", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted: earlier reports are untouched", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: still one line, and a code of its own (never 1, "findings")
        if debug:
            traceback.print_exc()
        click.echo(f"internal error: {type(exc).__name__}: {str(exc)[:300]} (fix: rerun with --debug and report "
                   "the traceback)", err=True)
        sys.exit(70)
    sys.exit(0)
