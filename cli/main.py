"""Entry point of the ``gradkit`` console script."""
import click


@click.group()
@click.version_option(package_name="gradkit")
def main() -> None:
    """gradkit: profile gradient code, hunt NaNs, summarize traces."""
