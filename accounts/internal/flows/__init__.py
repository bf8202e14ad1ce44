"""The account flows both front ends call: plain, typed functions over explicit state.

An HTML view (:mod:`accounts.views`) or an API view (:mod:`accounts.headless`) parses its
input, calls one function here and renders what it returns; no flow imports a view, and no
view imports another front end's view (``tests/engine/test_import_graph.py`` reads the graph).
"""
