"""The batch: rig many files headless, in worker Blenders or on a Dask cluster (docs/batch.md)."""
