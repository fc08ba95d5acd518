"""The `tracecli` command's entry point, apart from the commands so that it can import
them with the garbage collector off."""

import gc


def main() -> None:
    # Importing torch and the commands makes over a million objects that live as long as
    # the process. With the collector on, its full scans of them while importing cost
    # 0.3-0.4 s of every command's start-up; instead they are frozen once imported, out of
    # every later scan (app.main freezes what its command's set-up adds).
    gc.disable()
    try:
        from tracecli.cli.app import main as run_command  # deferred: imported with the collector off, for start-up
    finally:
        gc.freeze()
        gc.enable()
    run_command()
