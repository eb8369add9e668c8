"""Entry point of the ``gradkit`` console script: the command group."""
import click

from gradkit.cli.profile_cmd import profile
from gradkit.cli.run_cmd import run
from gradkit.cli.trace_cmd import trace


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gradkit", prog_name="gradkit")
def main() -> None:
    """gradkit: profile gradient code, hunt NaNs, summarize traces.

    \b
    Shell completion (bash, zsh, fish), e.g. for bash add to ~/.bashrc:
      eval "$(_GRADKIT_COMPLETE=bash_source gradkit)"
    """


main.add_command(profile)
main.add_command(run)
main.add_command(trace)
