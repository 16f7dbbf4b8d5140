"""The worker engine: claims jobs in batches, runs their handlers, records results."""
