"""``python -m gradkit`` runs the CLI."""
from gradkit.cli.main import main

main(prog_name="gradkit")
