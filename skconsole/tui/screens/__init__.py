"""The console's screens and modal dialogs, one per module."""
