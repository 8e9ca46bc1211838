"""The desktop editor (PySide6): the only package that imports Qt.

Views and controllers only. Every edit a gesture makes is a command on the graph layer's
:class:`~tfstudio.graph.Document`; the widgets redraw from the document's events. Torch is never
imported on the way to the first paint (the generated-code view compiles in the background).
Start it with ``tfstudio`` or ``python -m tfstudio gui``.
"""
