"""What the front ends share below their views: the flows (:mod:`accounts.internal.flows`)."""
