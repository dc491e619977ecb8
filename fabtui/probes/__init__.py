"""The probe catalog and the machinery that runs probes and judges their results."""
