"""
The service-api seam: a service (Throng, T3) on one side, a fake agent CLI behind it.

`seam` registers the seam and dispatches on ``request.service`` to `throng`
or `t3`; `common` holds their registry and shared comparisons.
"""
