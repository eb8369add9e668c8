"""gradkit's command-line interface (installed as ``gradkit.cli``)."""
