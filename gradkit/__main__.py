"""``python -m gradkit`` runs the CLI."""
from gradkit.cli.main import main

main()
